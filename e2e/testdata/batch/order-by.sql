-- ORDER BY without LIMIT, which streaming mode refuses: the rows come
-- sorted. NULL sorts first ascending and last descending; ties on the first
-- key are broken by the second.
-- compare: ordered
SET 'execution.runtime-mode' = 'batch';
SET 'parallelism.default' = '2';
CREATE TABLE scores (player STRING, team STRING, points INT);
INSERT INTO scores VALUES
  ('ann', 'red', 12), ('bob', 'blue', 7), ('cid', 'red', CAST(NULL AS INT)),
  ('dee', 'blue', 12), ('eve', CAST(NULL AS STRING), 3), ('fay', 'red', 7);
SELECT player, team, points
FROM scores
ORDER BY points DESC, player;
