-- A statement set: both INSERTs read one bounded source and run as one
-- job writing two managed tables; the client form (BEGIN ... END) and the
-- parser form (EXECUTE STATEMENT SET) in one script.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE src (id INT, name STRING);
CREATE TABLE evens (id INT, name STRING);
CREATE TABLE odds (id INT, name STRING);
INSERT INTO src VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e');
BEGIN STATEMENT SET;
INSERT INTO evens SELECT id, name FROM src WHERE id % 2 = 0;
INSERT INTO odds SELECT id, UPPER(name) FROM src WHERE id % 2 = 1;
END;
EXECUTE STATEMENT SET
BEGIN
  INSERT INTO evens VALUES (6, 'f');
  INSERT INTO odds SELECT id * 10 + 1, name FROM src WHERE id = 1;
END;
SELECT 'evens' AS t, id, name FROM evens
UNION ALL
SELECT 'odds' AS t, id, name FROM odds;
