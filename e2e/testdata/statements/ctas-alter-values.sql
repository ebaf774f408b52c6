-- CREATE TABLE AS SELECT over a comma join with a VALUES table, then a
-- join with a datagen table whose row count ALTER TABLE lowered: without
-- the ALTER, id 3 would join too.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (id INT, customer STRING, amount INT);
INSERT INTO orders VALUES (1, 'alice', 10), (2, 'bob', 5), (3, 'alice', 7), (4, 'carol', 9);
CREATE TABLE big WITH ('managed.partitions' = '2') AS
SELECT o.id, o.amount, c.city
FROM orders o, (VALUES ('alice', 'Oslo'), ('bob', 'Rome')) AS c(name, city)
WHERE o.customer = c.name AND o.amount > 6;
CREATE TABLE gen (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '4',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '9');
ALTER TABLE gen SET ('number-of-rows' = '2');
SELECT b.id, b.amount, b.city, v.EXPR$1 AS tag
FROM big b, gen g, (VALUES (1, 'first')) AS v
WHERE b.id = g.k AND v.EXPR$0 = b.id;
