-- Deduplication, Flink's Deduplicate: ROW_NUMBER ordered by a time
-- attribute alone, filtered by rn = 1. On event time the kept row is the
-- one with the latest (DESC) or earliest (ASC) rowtime, whatever the
-- arrival order: keep-last takes the later arrival on a tie, keep-first
-- keeps the earlier one. On processing time it is the last or first
-- arrival.
-- compare: final
CREATE TABLE ev (id STRING, k STRING, v INT, ts TIMESTAMP(3), pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
INSERT INTO ev VALUES
  ('e1', 'a', 1, TIMESTAMP '2024-01-01 10:00:05'),
  ('e2', 'a', 2, TIMESTAMP '2024-01-01 10:00:01'),
  ('e3', 'b', 3, TIMESTAMP '2024-01-01 10:00:02'),
  ('e4', 'a', 4, TIMESTAMP '2024-01-01 10:00:05'),
  ('e5', 'b', 5, TIMESTAMP '2024-01-01 10:00:09'),
  ('e6', 'c', 6, TIMESTAMP '2024-01-01 10:00:00'),
  ('e7', 'b', 7, TIMESTAMP '2024-01-01 10:00:02');
SELECT 'rowtime-last' AS how, k, id FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn FROM ev
) WHERE rn = 1
UNION ALL
SELECT 'rowtime-first', k, id FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) AS rn FROM ev
) WHERE rn = 1
UNION ALL
SELECT 'proctime-last', k, id FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt DESC) AS rn FROM ev
) WHERE rn = 1
UNION ALL
SELECT 'proctime-first', k, id FROM (
  SELECT id, k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt) AS rn FROM ev
) WHERE rn = 1;
