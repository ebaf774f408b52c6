-- ROW, ARRAY and MAP columns through a managed table, a shuffle (the
-- GROUP BY) and keyed state, with constructors, field access, subscripts,
-- CARDINALITY, ELEMENT and CAST to STRING.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE people (id INT, person ROW<id BIGINT, name STRING>, tags ARRAY<STRING>, attrs MAP<STRING, INT>);
INSERT INTO people VALUES
  (1, ROW(10, 'ann'), ARRAY['a', 'b'], MAP['x', 1, 'y', 2]),
  (2, ROW(11, 'bob'), ARRAY['a', 'b'], MAP['x', 3]);
INSERT INTO people VALUES
  (3, CAST(NULL AS ROW<id BIGINT, name STRING>), ARRAY['c', CAST(NULL AS STRING)], MAP['y', 4]),
  (4, ROW(10, 'ann'), SPLIT('c,', ','), CAST(NULL AS MAP<STRING, INT>));
SELECT tags, COUNT(*) AS n, SUM(attrs['x']) AS sx, MAX(person.name) AS mx, MAX(CARDINALITY(attrs)) AS c,
  MAX(tags[2]) AS t2, MAX(ELEMENT(ARRAY[people.person.id])) AS e,
  MAX(CAST(ROW(id, tags) AS STRING)) AS r, MAX(CAST(MAP['k', ARRAY[id]] AS STRING)) AS m
FROM people GROUP BY tags;
