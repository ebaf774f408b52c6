-- An upsert sink keyed by a column that is not the stream's key (the
-- aggregate's is (id, v)): row 2 moves from v = 'a' to 'b', so group
-- (2, 'a') is deleted, and that -D must not delete sink key 'a', which
-- group (1, 'a') still holds. The SinkMaterializer keeps both rows of 'a'
-- and brings group 1's back. (With 'table.exec.sink.upsert-materialize'
-- = 'NONE' key 'a' is lost in some runs.)
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE src (id INT, v STRING, n INT, PRIMARY KEY (id) NOT ENFORCED);
CREATE TABLE dst (v STRING, id INT, n INT, PRIMARY KEY (v) NOT ENFORCED);
INSERT INTO src VALUES (1, 'a', 10);
INSERT INTO src VALUES (2, 'a', 20);
INSERT INTO src VALUES (2, 'b', 20);
INSERT INTO dst SELECT v, id, COUNT(*) FROM src GROUP BY id, v;
SELECT * FROM dst;
