-- A faker table as the Flink SQL cookbook writes them, read at parallelism
-- 2 (500 rows per subtask): row count, numberBetween's [min, max) bounds,
-- randomDouble's range, a regexify choice into TINYINT, null-rate 1, UUIDs
-- and timestamps from #{date.past ...}.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (
  id INT,
  agent TINYINT,
  price DOUBLE,
  amount DECIMAL(6, 2),
  name STRING,
  uuid STRING,
  gone STRING,
  ts TIMESTAMP(3),
  flag BOOLEAN
) WITH (
  'connector' = 'faker',
  'number-of-rows' = '1000',
  'rows-per-second' = '100000',
  'fields.id.expression' = '#{number.numberBetween ''1'',''5''}',
  'fields.agent.expression' = '#{regexify ''(1|2|3|4|5){1}''}',
  'fields.price.expression' = '#{Number.randomDouble ''2'',''1'',''150''}',
  'fields.amount.expression' = '#{Number.randomDouble ''2'',''10'',''20''}',
  'fields.name.expression' = '#{Name.firstName} #{Name.lastName}',
  'fields.uuid.expression' = '#{Internet.uuid}',
  'fields.gone.expression' = '#{superhero.name}',
  'fields.gone.null-rate' = '1',
  'fields.ts.expression' = '#{date.past ''15'',''5'',''SECONDS''}',
  'fields.flag.expression' = '#{bool.bool}'
);
SELECT
  COUNT(*) AS n,
  MIN(id) AS min_id,
  MAX(id) AS max_id,
  COUNT(DISTINCT id) AS ids,
  MIN(agent) AS min_agent,
  MAX(agent) AS max_agent,
  SUM(CASE WHEN price >= 1 AND price <= 150 THEN 1 ELSE 0 END) AS prices_in_range,
  SUM(CASE WHEN amount >= 10 AND amount <= 20 THEN 1 ELSE 0 END) AS amounts_in_range,
  MIN(CHAR_LENGTH(uuid)) AS uuid_len,
  COUNT(DISTINCT uuid) AS uuids,
  COUNT(gone) AS gone,
  COUNT(ts) AS ts,
  COUNT(DISTINCT flag) AS flags,
  MIN(POSITION(' ' IN name)) > 1 AS names
FROM orders;
