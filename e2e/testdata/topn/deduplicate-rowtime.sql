-- Event-time deduplication with its input in two parts (the savepoint
-- test restores between them): the kept row per key is the latest (DESC)
-- or earliest (ASC) by rowtime, whichever part it arrived in.
-- compare: final
CREATE TABLE ev (id STRING, k STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
INSERT INTO ev VALUES
  ('e1', 'a', TIMESTAMP '2024-01-01 10:00:05'),
  ('e2', 'b', TIMESTAMP '2024-01-01 10:00:02'),
  ('e3', 'c', TIMESTAMP '2024-01-01 10:00:00');
INSERT INTO ev VALUES
  ('e4', 'a', TIMESTAMP '2024-01-01 10:00:01'),
  ('e5', 'b', TIMESTAMP '2024-01-01 10:00:09'),
  ('e6', 'a', TIMESTAMP '2024-01-01 10:00:05');
SELECT 'last' AS how, k, id FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn FROM ev
) WHERE rn = 1
UNION ALL
SELECT 'first', k, id FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM ev
) WHERE rn = 1;
