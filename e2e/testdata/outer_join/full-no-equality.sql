-- FULL JOIN without an equality between the sides (it runs on one
-- subtask): each side's rows that match nothing appear padded.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE a (x INT, name STRING);
CREATE TABLE b (y INT, tag STRING);
INSERT INTO a VALUES (1, 'a1'), (5, 'a5'), (9, 'a9'), (CAST(NULL AS INT), 'anull');
INSERT INTO b VALUES (3, 'b3'), (6, 'b6'), (0, 'b0');
SELECT a.name, b.tag
FROM a
FULL JOIN b
  ON a.x < b.y;
