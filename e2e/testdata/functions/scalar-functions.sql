-- Scalar functions from Flink's library, with the results Flink's docs give
-- for their examples (LPAD, RPAD, REPEAT, CHR, OVERLAY, REGEXP_REPLACE,
-- TO_BASE64, CONVERT_TZ, JSON_VALUE, JSON_EXISTS, IS JSON).
-- compare: final
CREATE TABLE t (s STRING, n INT, j STRING);
INSERT INTO t VALUES ('hi', 353, '{"a": {"b": [1, 2]}, "c": "x"}'), (CAST(NULL AS STRING), CAST(NULL AS INT), CAST(NULL AS STRING));
SELECT LPAD(s, 4, '??') AS lp, RPAD(s, 1, '??') AS rp, REPEAT(s, 2) AS rep, CHR(n) AS c,
  OVERLAY('xxxxxtest' PLACING 'xxxx' FROM 6 FOR 2) AS ov, REGEXP_REPLACE('foobar', 'oo|ar', '') AS rr,
  MD5(s) AS md, TO_BASE64('hello world') AS b64, JSON_VALUE(j, '$.c') AS jv, JSON_QUERY(j, '$.a') AS jq,
  JSON_EXISTS(j, '$.a.b[1]') AS je, j IS JSON OBJECT AS isj, JSON_OBJECT(KEY 'k' VALUE n) AS jo,
  GREATEST(n, 7) AS g, FLOOR(TIMESTAMP '2024-03-01 02:03:04' TO HOUR) AS fl,
  CONVERT_TZ('1970-01-01 00:00:00', 'UTC', 'America/Los_Angeles') AS tz, n IS DISTINCT FROM NULL AS dis
FROM t;
