-- Window deduplication: the last bid (ORDER BY bidtime DESC) and the
-- first (ASC) of every 10-minute window and supplier, rn = 1, each
-- emitted when its window closes. The bid at 08:04 arrives after its
-- window fired and is dropped as late, though it would be supplier1's
-- first of that window.
-- The input comes in two INSERTs, so that the savepoint test can stop
-- between them with windows open.
-- compare: final
SET 'parallelism.default' = '2';
SET 'braid.exec.source.batch-size' = '1';
CREATE TABLE bid (
    bidtime TIMESTAMP(3),
    price DECIMAL(10, 2),
    item STRING,
    supplier_id STRING,
    WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
);
INSERT INTO bid VALUES
    (TIMESTAMP '2020-04-15 08:05:00', 4.00, 'A', 'supplier1'),
    (TIMESTAMP '2020-04-15 08:06:00', 4.00, 'C', 'supplier2'),
    (TIMESTAMP '2020-04-15 08:07:00', 2.00, 'G', 'supplier1'),
    (TIMESTAMP '2020-04-15 08:08:00', 2.00, 'B', 'supplier3'),
    (TIMESTAMP '2020-04-15 08:09:00', 5.00, 'D', 'supplier4'),
    (TIMESTAMP '2020-04-15 08:11:00', 2.00, 'B', 'supplier3');
INSERT INTO bid VALUES
    (TIMESTAMP '2020-04-15 08:13:00', 1.00, 'E', 'supplier1'),
    (TIMESTAMP '2020-04-15 08:15:00', 3.00, 'H', 'supplier2'),
    (TIMESTAMP '2020-04-15 08:17:00', 6.00, 'F', 'supplier5'),
    (TIMESTAMP '2020-04-15 08:04:00', 9.00, 'L', 'supplier1');
SELECT 'last' AS keep, bidtime, price, item, supplier_id, window_start, window_end, rownum FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, supplier_id ORDER BY bidtime DESC) AS rownum
    FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
) WHERE rownum <= 1 AND supplier_id IN ('supplier1', 'supplier2')
UNION ALL
SELECT 'first', bidtime, price, item, supplier_id, window_start, window_end, rownum FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, supplier_id ORDER BY bidtime) AS rownum
    FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
) WHERE rownum = 1 AND supplier_id = 'supplier1';
