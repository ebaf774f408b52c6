-- RANK and DENSE_RANK Top-N in batch mode: tied rows share a rank (RANK
-- leaves a gap after them, DENSE_RANK does not) and every row of rank <= n
-- is kept; ROW_NUMBER numbers them.
-- compare: final
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE score (player STRING, team STRING, points INT);
INSERT INTO score VALUES
  ('ann', 'red', 12), ('bob', 'red', 9), ('cid', 'red', 12), ('dee', 'red', 7),
  ('eve', 'blue', 5), ('fay', 'blue', 8), ('gus', 'blue', 8), ('hal', 'blue', 3);
SELECT 'rank' AS f, team, player, r FROM (
  SELECT *, RANK() OVER (PARTITION BY team ORDER BY points DESC) AS r FROM score
) WHERE r <= 2
UNION ALL
SELECT 'dense_rank', team, player, r FROM (
  SELECT *, DENSE_RANK() OVER (PARTITION BY team ORDER BY points DESC) AS r FROM score
) WHERE r <= 2
UNION ALL
SELECT 'row_number', team, player, r FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY team ORDER BY points DESC, player) AS r FROM score
) WHERE r <= 2;
