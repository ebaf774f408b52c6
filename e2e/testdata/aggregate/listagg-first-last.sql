-- LISTAGG, FIRST_VALUE and LAST_VALUE in arrival order over an upsert
-- table, with Flink's retraction: a retracted value removes its earliest
-- occurrence (red's 'ann' update removes the first 'ann'), and a retracted
-- first or last value falls back to the next one left. LISTAGG(DISTINCT)
-- lists a value from its first live row until its last is gone.
-- compare: final
SET 'parallelism.default' = '1';
CREATE TABLE events (id INT, team STRING, who STRING, PRIMARY KEY (id) NOT ENFORCED);
INSERT INTO events VALUES (1, 'red', 'ann'), (2, 'red', 'bob'), (3, 'red', 'ann'), (4, 'blue', 'cid'), (5, 'blue', 'dee');
INSERT INTO events VALUES (3, 'red', 'eve'), (5, 'blue', 'fay'), (4, 'green', 'cid');
SELECT
    team,
    LISTAGG(who) AS everyone,
    LISTAGG(DISTINCT who, ' ') AS names,
    FIRST_VALUE(who) AS first_who,
    LAST_VALUE(who) AS last_who,
    COUNT(*) AS n
FROM events
GROUP BY team;
