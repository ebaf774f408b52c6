-- SELECT * over the deduplication subquery reads rn, which with rn = 1 is
-- the constant 1 (Flink's RankNumberColumnRemoveRule): still a
-- deduplication, keeping the latest row per key by event time.
-- compare: final
CREATE TABLE ev (id STRING, k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts);
INSERT INTO ev VALUES
  ('e1', 'a', TIMESTAMP '2024-01-01 10:00:05'),
  ('e2', 'a', TIMESTAMP '2024-01-01 10:00:07'),
  ('e3', 'a', TIMESTAMP '2024-01-01 10:00:01'),
  ('e4', 'b', TIMESTAMP '2024-01-01 10:00:03');
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn FROM ev
) WHERE rn = 1;
