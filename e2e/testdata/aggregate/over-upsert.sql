-- Aggregates over an upsert table: its updates retract old rows, so counts
-- fall and MIN/MAX find the next value; a DISTINCT feeds a global count.
-- compare: final
CREATE TABLE stock (item STRING, shelf STRING, units INT, PRIMARY KEY (item) NOT ENFORCED);
INSERT INTO stock VALUES ('pen', 'A', 10), ('ink', 'A', 3), ('cap', 'B', 7), ('pad', 'B', 1);
INSERT INTO stock VALUES ('pen', 'B', 2), ('pad', 'B', 8);
CREATE TABLE shelves (shelf STRING, items BIGINT, fewest INT, most INT, PRIMARY KEY (shelf) NOT ENFORCED);
INSERT INTO shelves
    SELECT shelf, COUNT(*), MIN(units), MAX(units) FROM stock GROUP BY shelf;
SELECT s.shelf, s.items, s.fewest, s.most, t.shelves
FROM shelves s
CROSS JOIN (SELECT COUNT(*) AS shelves FROM (SELECT DISTINCT shelf FROM stock)) t;
