-- The SQL/JSON functions with their clauses, as Flink runs them: paths
-- are strict without a mode word, lax with one; ON EMPTY, ON ERROR,
-- RETURNING, the array wrappers, and NULL/ABSENT ON NULL.
-- compare: final
CREATE TABLE docs (id INT, j STRING);
INSERT INTO docs VALUES
  (1, '{"a": [1, 2.50], "b": {"z": true, "c": "x"}, "n": null, "s": "42"}'),
  (2, '{"a": []}'),
  (3, 'not json'),
  (4, CAST(NULL AS STRING));
SELECT id,
  JSON_EXISTS(j, '$.b.c') AS e1,
  JSON_EXISTS(j, '$.n' UNKNOWN ON ERROR) AS e2,
  JSON_EXISTS(j, 'lax $.n' TRUE ON ERROR) AS e3,
  JSON_EXISTS(j, '$.a[*]') AS e4,
  JSON_VALUE(j, '$.a[1]') AS v1,
  JSON_VALUE(j, '$.s' RETURNING INT) + 1 AS v2,
  JSON_VALUE(j, 'lax $.missing' DEFAULT 'none' ON EMPTY) AS v3,
  JSON_VALUE(j, '$.missing' DEFAULT 'none' ON EMPTY DEFAULT 'err' ON ERROR) AS v4,
  JSON_VALUE(j, '$.b' RETURNING DOUBLE DEFAULT id ON ERROR) AS v5,
  JSON_QUERY(j, '$.b') AS q1,
  JSON_QUERY(j, '$.b.c' WITH CONDITIONAL ARRAY WRAPPER) AS q2,
  JSON_QUERY(j, '$.a[*]' WITH UNCONDITIONAL ARRAY WRAPPER) AS q3,
  JSON_QUERY(j, 'lax $.s' EMPTY OBJECT ON EMPTY EMPTY ARRAY ON ERROR) AS q4,
  JSON_QUERY(j, '$.s' EMPTY OBJECT ON EMPTY EMPTY ARRAY ON ERROR) AS q5,
  JSON_OBJECT(KEY 'z' VALUE id, KEY 'a' VALUE JSON_VALUE(j, 'lax $.b.c') ABSENT ON NULL) AS o1,
  JSON_ARRAY(id, JSON_VALUE(j, 'lax $.b.c') NULL ON NULL) AS a1
FROM docs;
