// Package client is the Go client library of Braid: it talks to a job
// manager's ClientService over gRPC, runs SQL scripts in a session and
// decodes their results into changelog batches.
//
// A session runs the statements of a script in order. For every statement
// the Handler hears either Status (a statement without a result table: DDL,
// INSERT, SET, USE) or Schema, then zero or more Batch calls, then End (a
// query). Callbacks for one Execute call are made one at a time, in order,
// never concurrently.
//
//	c, err := client.Dial(ctx, "localhost:6123", client.WithToken(os.Getenv("BRAID_TOKEN")))
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	s, err := c.OpenSession(ctx, map[string]string{"table.local-time-zone": "UTC"})
//	if err != nil {
//		return err
//	}
//	defer s.Close(context.Background())
//	err = s.Execute(ctx, "CREATE TABLE t (a INT); SELECT * FROM t;", false, h)
//
// Errors the server reports keep the server's message as their text (see
// ServerError; a refused caller's begins "Unauthenticated: " or
// "Permission denied: "); an endpoint that cannot be reached gives an error that begins
// "cannot reach job manager at host:port".
package client
