/*
 * rdkafka-passthrough: the limit the Swift client is measured against.
 *
 * Consumes COUNT records from IN as a consumer-group member and produces one
 * record of SIZE bytes per input to OUT with the same key, storing each input
 * offset once its output is acknowledged, exactly as `notify-bench passthrough`
 * does through the Swift Kafka module. The clock runs from the first record
 * consumed to the last delivery report.
 *
 * usage: rdkafka-passthrough BOOTSTRAP IN OUT COUNT SIZE GROUP
 */
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long delivered = 0;
static long failed = 0;
static rd_kafka_topic_t *input_topic = NULL;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *message, void *opaque) {
    (void)rk;
    (void)opaque;
    if (message->err) {
        failed++;
        return;
    }
    delivered++;
    uintptr_t source = (uintptr_t)message->_private;
    int32_t partition = (int32_t)(source >> 40);
    int64_t offset = (int64_t)(source & ((UINT64_C(1) << 40) - 1));
    rd_kafka_offset_store(input_topic, partition, offset);
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
    char error[512];
    if (rd_kafka_conf_set(conf, key, value, error, sizeof error) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "%s: %s\n", key, error);
        exit(2);
    }
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s BOOTSTRAP IN OUT COUNT SIZE GROUP\n", argv[0]);
        return 2;
    }
    const char *bootstrap = argv[1], *in = argv[2], *out = argv[3], *group = argv[6];
    long count = atol(argv[4]);
    size_t size = (size_t)atol(argv[5]);
    char error[512];

    rd_kafka_conf_t *producer_conf = rd_kafka_conf_new();
    set(producer_conf, "bootstrap.servers", bootstrap);
    set(producer_conf, "enable.idempotence", "true");
    set(producer_conf, "linger.ms", "5");
    set(producer_conf, "queue.buffering.max.messages", "100000");
    rd_kafka_conf_set_dr_msg_cb(producer_conf, on_delivery);
    rd_kafka_t *producer = rd_kafka_new(RD_KAFKA_PRODUCER, producer_conf, error, sizeof error);
    if (!producer) { fprintf(stderr, "producer: %s\n", error); return 1; }

    rd_kafka_conf_t *consumer_conf = rd_kafka_conf_new();
    set(consumer_conf, "bootstrap.servers", bootstrap);
    set(consumer_conf, "group.id", group);
    set(consumer_conf, "auto.offset.reset", "earliest");
    set(consumer_conf, "partition.assignment.strategy", "cooperative-sticky");
    set(consumer_conf, "enable.auto.commit", "true");
    set(consumer_conf, "enable.auto.offset.store", "false");
    rd_kafka_t *consumer = rd_kafka_new(RD_KAFKA_CONSUMER, consumer_conf, error, sizeof error);
    if (!consumer) { fprintf(stderr, "consumer: %s\n", error); return 1; }
    rd_kafka_poll_set_consumer(consumer);
    input_topic = rd_kafka_topic_new(consumer, in, NULL);
    rd_kafka_topic_t *output_topic = rd_kafka_topic_new(producer, out, NULL);

    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, in, RD_KAFKA_PARTITION_UA);
    rd_kafka_subscribe(consumer, topics);
    rd_kafka_topic_partition_list_destroy(topics);

    char *value = malloc(size);
    memset(value, 'x', size);
    long consumed = 0;
    double started = 0;
    while (delivered + failed < count) {
        rd_kafka_message_t *message = consumed < count ? rd_kafka_consumer_poll(consumer, 10) : NULL;
        if (message) {
            if (!message->err) {
                if (started == 0) started = now_seconds();
                uintptr_t source = ((uintptr_t)message->partition << 40) | (uintptr_t)(message->offset + 1);
                while (rd_kafka_produce(output_topic, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, value, size,
                                        message->key, message->key_len, (void *)source) == -1) {
                    rd_kafka_poll(producer, 1);
                }
                consumed++;
            }
            rd_kafka_message_destroy(message);
        }
        rd_kafka_poll(producer, 0);
        if (consumed >= count) rd_kafka_poll(producer, 10);
    }
    double seconds = now_seconds() - started;
    printf("passthrough-c: %ld records in %.3f s = %.0f records/s\n", count, seconds, (double)count / seconds);
    if (failed) fprintf(stderr, "%ld deliveries failed\n", failed);

    rd_kafka_flush(producer, 10000);
    rd_kafka_consumer_close(consumer);
    rd_kafka_topic_destroy(input_topic);
    rd_kafka_topic_destroy(output_topic);
    rd_kafka_destroy(consumer);
    rd_kafka_destroy(producer);
    free(value);
    return failed ? 1 : 0;
}
