-- ORDER BY ... LIMIT over an aggregate, by a column the query does not
-- select and then by one it does: the three teams with the most points, in
-- order (blue, gold and red tie on 19 points; the team name decides).
-- compare: ordered
SET 'execution.runtime-mode' = 'batch';
SET 'parallelism.default' = '2';
CREATE TABLE scores (player STRING, team STRING, points INT);
INSERT INTO scores VALUES
  ('ann', 'red', 12), ('bob', 'blue', 7), ('cid', 'green', 30), ('dee', 'blue', 12),
  ('eve', 'gold', 3), ('fay', 'red', 7), ('gus', 'gold', 16), ('hal', 'pink', 1);
SELECT team, COUNT(*) AS players
FROM scores
GROUP BY team
ORDER BY SUM(points) DESC, team
LIMIT 3;
