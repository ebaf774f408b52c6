-- Window Top-N after a window aggregate (Flink's docs' example): the top 3
-- suppliers by total price of every 10-minute window. The result is
-- insert-only, each window's rows written when it closes, so it goes into
-- an append-only table. The late bid at 08:04 is dropped by the window
-- aggregate.
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
CREATE TABLE top_suppliers (
    window_start TIMESTAMP(3),
    window_end TIMESTAMP(3),
    supplier_id STRING,
    price DECIMAL(38, 2),
    cnt BIGINT,
    rownum BIGINT
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
    (TIMESTAMP '2020-04-15 08:04:00', 9.00, 'L', 'supplier6');
INSERT INTO top_suppliers
SELECT * FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rownum
    FROM (
        SELECT window_start, window_end, supplier_id, SUM(price) AS price, COUNT(*) AS cnt
        FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
        GROUP BY window_start, window_end, supplier_id
    )
) WHERE rownum <= 3;
SELECT * FROM top_suppliers;
