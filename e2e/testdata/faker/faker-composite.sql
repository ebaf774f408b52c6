-- Collections and rows from faker expressions, as flink-faker's README
-- writes them: an ARRAY of 'length' elements, a MAP whose repeated keys
-- collapse, a MULTISET counting its elements, a ROW with one expression
-- per field, and timestamps formatted by a date pattern.
-- compare: final
CREATE TABLE hp (
  locations ARRAY<STRING>,
  ages MAP<STRING, INT>,
  spells MULTISET<STRING>,
  points ROW<house STRING, points INT>,
  day STRING
) WITH (
  'connector' = 'faker',
  'number-of-rows' = '200',
  'fields.locations.expression' = '#{harry_potter.location}',
  'fields.locations.length' = '3',
  'fields.ages.key.expression' = '#{options.option ''a'',''b''}',
  'fields.ages.value.expression' = '#{number.numberBetween ''10'',''100''}',
  'fields.ages.length' = '10',
  'fields.spells.expression' = '#{harry_potter.spell}',
  'fields.spells.length' = '5',
  'fields.points.house.expression' = '#{harry_potter.house}',
  'fields.points.points.expression' = '#{number.numberBetween ''10'',''100''}',
  'fields.day.expression' = '#{date.past ''1'',''HOURS'',''yyyy''}'
);
SELECT
  COUNT(*) AS n,
  MIN(CARDINALITY(locations)) AS min_locations,
  MAX(CARDINALITY(locations)) AS max_locations,
  MAX(CARDINALITY(ages)) AS max_ages,
  MIN(CARDINALITY(spells)) >= 1 AS spells,
  MIN(points.points) >= 10 AND MAX(points.points) < 100 AS points_in_range,
  MIN(CHAR_LENGTH(day)) AS day_len
FROM hp;
