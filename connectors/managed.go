package connectors

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/types"
)

// OptionManagedPartitions sets a managed table's partition count (default 1).
const OptionManagedPartitions = "managed.partitions"

// maxTopicLen is the longest topic name Kafka accepts.
const maxTopicLen = 249

// ManagedTopic returns the topic that holds managed table t:
// "braid.<database>.<name>.<created unix ms>". Characters Kafka refuses (all
// but ASCII letters, digits, '.', '_' and '-') become '_'; a name too long for
// Kafka is cut and ends in a hash of the full name, so it stays unique.
func ManagedTopic(t *catalog.Table) string {
	name := "braid." + sanitizeTopicPart(t.Database) + "." + sanitizeTopicPart(t.Name) + "." +
		strconv.FormatInt(t.CreatedUnixMs, 10)
	if len(name) <= maxTopicLen {
		return name
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	suffix := "." + strconv.FormatUint(h.Sum64(), 16)
	return name[:maxTopicLen-len(suffix)] + suffix
}

func sanitizeTopicPart(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// managedPartitions reads the 'managed.partitions' option.
func managedPartitions(t *catalog.Table) (int32, error) {
	v, ok := t.Options[OptionManagedPartitions]
	if !ok {
		return 1, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > 10000 {
		return 0, fmt.Errorf("table %s.%s: option '%s' must be a whole number from 1 to 10000, got '%s'",
			t.Database, t.Name, OptionManagedPartitions, v)
	}
	return int32(n), nil
}

// kafkaOpts are the client options every managed-table client shares. The
// retry timeout bounds how long a request keeps retrying an unreachable
// broker before the error reaches the user.
func kafkaOpts(brokers []string) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(brokers...),
		kgo.DialTimeout(5 * time.Second),
		kgo.RetryTimeout(20 * time.Second),
	}
}

func newKafkaClient(brokers []string, extra ...kgo.Opt) (*kgo.Client, error) {
	if len(brokers) == 0 {
		return nil, errors.New("no brokers configured for the cluster's default log")
	}
	return kgo.NewClient(append(kafkaOpts(brokers), extra...)...)
}

// topicError names the topic and brokers of a failed Kafka operation.
func topicError(op, topic string, brokers []string, err error) error {
	return types.WithClass(fmt.Errorf("managed table: %s topic %q on brokers %s: %w", op, topic, strings.Join(brokers, ","), err), types.ClassExternal)
}

// CreateManagedTopic creates the topic of managed table t with the partition
// count of its 'managed.partitions' option (1 by default) and the brokers'
// default replication. It fails if the topic exists. ctx bounds the call.
func CreateManagedTopic(ctx context.Context, brokers []string, t *catalog.Table) error {
	parts, err := managedPartitions(t)
	if err != nil {
		return err
	}
	return createTopic(ctx, brokers, ManagedTopic(t), parts, false)
}

// createTopic creates topic with parts partitions; with existingOK a topic
// that exists already is left as it is.
func createTopic(ctx context.Context, brokers []string, topic string, parts int32, existingOK bool) error {
	cl, err := newKafkaClient(brokers)
	if err != nil {
		return topicError("create", topic, brokers, err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, parts, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !(existingOK && errors.Is(err, kerr.TopicAlreadyExists)) {
		return topicError("create", topic, brokers, err)
	}
	return nil
}

// DeleteManagedTopic deletes the topic of managed table t. Deleting a topic
// that does not exist succeeds, so a retried DROP TABLE is harmless.
func DeleteManagedTopic(ctx context.Context, brokers []string, t *catalog.Table) error {
	topic := ManagedTopic(t)
	cl, err := newKafkaClient(brokers)
	if err != nil {
		return topicError("delete", topic, brokers, err)
	}
	defer cl.Close()
	resps, err := kadm.NewClient(cl).DeleteTopics(ctx, topic)
	if err == nil {
		if r, ok := resps[topic]; ok {
			err = r.Err
		}
	}
	if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return topicError("delete", topic, brokers, err)
	}
	return nil
}

// topicPartitions returns the partition count of topic.
func topicPartitions(ctx context.Context, adm *kadm.Client, topic string) (int, error) {
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return 0, err
	}
	d, ok := details[topic]
	if !ok {
		return 0, kerr.UnknownTopicOrPartition
	}
	if d.Err != nil {
		return 0, d.Err
	}
	return len(d.Partitions), nil
}

// ManagedPartitionCount returns how many partitions the topic of managed
// table t has on brokers.
func ManagedPartitionCount(ctx context.Context, brokers []string, t *catalog.Table) (int, error) {
	topic := ManagedTopic(t)
	cl, err := newKafkaClient(brokers)
	if err != nil {
		return 0, topicError("describe", topic, brokers, err)
	}
	defer cl.Close()
	n, err := topicPartitions(ctx, kadm.NewClient(cl), topic)
	if err != nil {
		return 0, topicError("describe", topic, brokers, err)
	}
	return n, nil
}

// PingBrokers checks that one of brokers answers, within ctx.
func PingBrokers(ctx context.Context, brokers []string) error {
	cl, err := newKafkaClient(brokers)
	if err != nil {
		return err
	}
	defer cl.Close()
	return cl.Ping(ctx)
}
