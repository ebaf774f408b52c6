-- CROSS JOIN UNNEST of an ARRAY (WITH ORDINALITY), a MAP and an ARRAY of
-- ROWs, and LEFT JOIN UNNEST ... ON TRUE, feeding an aggregate at
-- parallelism 2 (a shuffle of the unnested rows).
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (id INT, items ARRAY<ROW<sku STRING, qty INT>>, tags ARRAY<STRING>, attrs MAP<STRING, STRING>);
INSERT INTO orders VALUES
  (1, ARRAY[ROW('a', 2), ROW('b', 1)], ARRAY['new', 'gift'], MAP['src', 'web']),
  (2, ARRAY[ROW('a', 5)], CAST(NULL AS ARRAY<STRING>), MAP['src', 'app', 'ref', 'x']);
INSERT INTO orders VALUES
  (3, ARRAY[ROW('c', 1)], ARRAY['gift'], MAP['src', 'web']);
SELECT sku, SUM(qty) AS qty, COUNT(DISTINCT o.id) AS orders,
  MAX(tag) AS max_tag, MAX(pos) AS max_pos, COUNT(k) AS attrs
FROM orders o
  CROSS JOIN UNNEST(o.items) AS i(sku, qty)
  LEFT JOIN UNNEST(o.tags) WITH ORDINALITY AS t(tag, pos) ON TRUE
  CROSS JOIN UNNEST(o.attrs) AS a(k, v)
GROUP BY sku;
