-- The nexmark connector with the benchmark's DDL: counts per event type
-- over 1000 events at parallelism 2 (splits of ids 2..501 and 502..1001),
-- and the first bids of both splits through the benchmark's bid view.
SET 'parallelism.default' = '2';
CREATE TABLE nexmark (
    event_type INT,
    person ROW<
        id BIGINT,
        name VARCHAR,
        emailAddress VARCHAR,
        creditCard VARCHAR,
        city VARCHAR,
        state VARCHAR,
        dateTime TIMESTAMP(3),
        extra VARCHAR>,
    auction ROW<
        id BIGINT,
        itemName VARCHAR,
        description VARCHAR,
        initialBid BIGINT,
        reserve BIGINT,
        dateTime TIMESTAMP(3),
        expires TIMESTAMP(3),
        seller BIGINT,
        category BIGINT,
        extra VARCHAR>,
    bid ROW<
        auction BIGINT,
        bidder BIGINT,
        price BIGINT,
        channel VARCHAR,
        url VARCHAR,
        dateTime TIMESTAMP(3),
        extra VARCHAR>,
    dateTime AS
        CASE
            WHEN event_type = 0 THEN person.dateTime
            WHEN event_type = 1 THEN auction.dateTime
            ELSE bid.dateTime
        END,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'first-event.rate' = '10000',
    'next-event.rate' = '10000',
    'events.num' = '1000',
    'base-time' = '2024-01-01 00:00:00'
);
CREATE VIEW bid AS
SELECT
    bid.auction AS auction, bid.bidder AS bidder, bid.price AS price,
    bid.channel AS channel, bid.url AS url, dateTime, bid.extra AS extra
FROM nexmark WHERE event_type = 2;
CREATE VIEW person AS
SELECT person.id AS id, person.name AS name, person.state AS state, dateTime
FROM nexmark WHERE event_type = 0;
SELECT event_type, COUNT(*) AS events, MIN(dateTime) AS first_time, MAX(dateTime) AS last_time
FROM nexmark GROUP BY event_type;
SELECT auction, bidder, price, channel, url, dateTime, CHAR_LENGTH(extra) AS extra_len
FROM bid WHERE dateTime < TIMESTAMP '2024-01-01 00:00:00.002';
SELECT id, name, state, dateTime FROM person WHERE id < 1004;
