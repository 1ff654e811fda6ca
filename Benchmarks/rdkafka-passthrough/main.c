/*
 * rdkafka-passthrough: the limits the Swift code is measured against, with
 * librdkafka used directly from C.
 *
 *   rdkafka-passthrough BOOTSTRAP IN OUT COUNT SIZE GROUP
 *
 * Consumes COUNT records from IN as a consumer-group member and produces one
 * record of SIZE bytes per input to OUT with the same key, storing each input
 * offset once its output is acknowledged, exactly as `notify-bench passthrough`
 * does through the Swift Kafka module. The clock runs from the first record
 * consumed to the last delivery report.
 *
 *   rdkafka-passthrough --pipeline-floor BOOTSTRAP IN MID OUT COUNT GROUP [name=value ...]
 *
 * The record operations of `notify-bench pipeline` and nothing else: a producer
 * feeds COUNT message-sized records (191 bytes, 10,000 keys) to IN; hop 1
 * consumes them in group GROUP.1 and produces a fanout-sized record (520 bytes
 * and a traceparent header) per input to MID; hop 2 consumes MID in group
 * GROUP.2 and produces a command-sized record (1,165 bytes and a traceparent
 * header) per input to OUT. Both hops share one producer, as the pipeline's
 * stages do, and each stores an input's offset once its output is acknowledged.
 * The name=value properties go to every client, as `notify-bench pipeline -X`.
 * The clock runs from the first record fed to the last output of hop 2
 * acknowledged. JSON, state and changelogs are left out, so this rate bounds
 * the pipeline's from above on the same broker and machine.
 */
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Per hop: the topic its inputs come from (to store their offsets) and how many outputs were acknowledged. */
static rd_kafka_topic_t *hop_inputs[2] = {NULL, NULL};
static atomic_long delivered[2];
static atomic_long failed;
static atomic_bool stopping;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An output's opaque: its hop (bit 63), its input's partition (bits 40-62) and the offset to store (bits 0-39). */
static void *source_of(int hop, const rd_kafka_message_t *input) {
    return (void *)(((uintptr_t)hop << 63) | ((uintptr_t)input->partition << 40) | (uintptr_t)(input->offset + 1));
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *message, void *opaque) {
    (void)rk;
    (void)opaque;
    if (message->err) {
        atomic_fetch_add(&failed, 1);
        return;
    }
    if (!message->_private) return; /* fed by the pipeline floor: no input */
    uintptr_t source = (uintptr_t)message->_private;
    int hop = (int)(source >> 63);
    int32_t partition = (int32_t)((source >> 40) & ((UINT64_C(1) << 23) - 1));
    int64_t offset = (int64_t)(source & ((UINT64_C(1) << 40) - 1));
    rd_kafka_offset_store(hop_inputs[hop], partition, offset);
    atomic_fetch_add(&delivered[hop], 1);
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
    char error[512];
    if (rd_kafka_conf_set(conf, key, value, error, sizeof error) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "%s: %s\n", key, error);
        exit(2);
    }
}

/* Sets each name=value of `properties` on `conf`, and silences warnings if there are any. */
static void set_all(rd_kafka_conf_t *conf, char **properties, int count) {
    /* Every client gets every property: a producer would warn of each consumer property it ignores, and the reverse. */
    if (count > 0) set(conf, "log_level", "3");
    for (int i = 0; i < count; i++) {
        char *equals = strchr(properties[i], '=');
        if (!equals) {
            fprintf(stderr, "a property wants name=value, not %s\n", properties[i]);
            exit(2);
        }
        *equals = '\0';
        set(conf, properties[i], equals + 1);
        *equals = '=';
    }
}

static rd_kafka_t *new_producer(const char *bootstrap, const char *linger, char **properties, int count) {
    char error[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "enable.idempotence", "true");
    set(conf, "linger.ms", linger);
    set(conf, "queue.buffering.max.messages", "100000");
    set_all(conf, properties, count);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_t *producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    if (!producer) { fprintf(stderr, "producer: %s\n", error); exit(1); }
    return producer;
}

static rd_kafka_t *new_consumer(const char *bootstrap, const char *group, const char *topic, char **properties, int count) {
    char error[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "group.id", group);
    set(conf, "auto.offset.reset", "earliest");
    set(conf, "partition.assignment.strategy", "cooperative-sticky");
    set(conf, "enable.auto.commit", "true");
    set(conf, "enable.auto.offset.store", "false");
    set_all(conf, properties, count);
    rd_kafka_t *consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
    if (!consumer) { fprintf(stderr, "consumer: %s\n", error); exit(1); }
    rd_kafka_poll_set_consumer(consumer);
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_subscribe(consumer, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    return consumer;
}

static void close_consumer(rd_kafka_t *consumer) {
    rd_kafka_consumer_close(consumer);
    rd_kafka_destroy(consumer);
}

static int passthrough(char **argv) {
    const char *bootstrap = argv[1], *in = argv[2], *out = argv[3], *group = argv[6];
    long count = atol(argv[4]);
    size_t size = (size_t)atol(argv[5]);

    rd_kafka_t *producer = new_producer(bootstrap, "5", NULL, 0);
    rd_kafka_t *consumer = new_consumer(bootstrap, group, in, NULL, 0);
    hop_inputs[0] = rd_kafka_topic_new(consumer, in, NULL);
    rd_kafka_topic_t *output_topic = rd_kafka_topic_new(producer, out, NULL);

    char *value = malloc(size);
    memset(value, 'x', size);
    long consumed = 0;
    double started = 0;
    while (atomic_load(&delivered[0]) + atomic_load(&failed) < count) {
        rd_kafka_message_t *message = consumed < count ? rd_kafka_consumer_poll(consumer, 10) : NULL;
        if (message) {
            if (!message->err) {
                if (started == 0) started = now_seconds();
                while (rd_kafka_produce(output_topic, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, value, size,
                                        message->key, message->key_len, source_of(0, message)) == -1) {
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
    long failures = atomic_load(&failed);
    if (failures) fprintf(stderr, "%ld deliveries failed\n", failures);

    rd_kafka_flush(producer, 10000);
    rd_kafka_topic_destroy(hop_inputs[0]);
    rd_kafka_topic_destroy(output_topic);
    close_consumer(consumer);
    rd_kafka_destroy(producer);
    free(value);
    return failures ? 1 : 0;
}

/* One hop of the pipeline floor, run on a thread of its own: consume, produce one output per input. */
struct hop {
    int index;
    rd_kafka_t *consumer;
    rd_kafka_t *producer;
    rd_kafka_topic_t *output;
    size_t size;
    long count;
};

static const char traceparent[] = "00-1c5954790c614c2dd7075ea728050f88-dc67e311b7020017-01";

static void *run_hop(void *argument) {
    struct hop *hop = argument;
    char *value = malloc(hop->size);
    memset(value, 'x', hop->size);
    long consumed = 0;
    while (consumed < hop->count && !atomic_load(&stopping)) {
        rd_kafka_message_t *message = rd_kafka_consumer_poll(hop->consumer, 10);
        if (!message) continue;
        if (!message->err) {
            rd_kafka_resp_err_t err;
            while ((err = rd_kafka_producev(hop->producer, RD_KAFKA_V_RKT(hop->output),
                                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                            RD_KAFKA_V_KEY(message->key, message->key_len),
                                            RD_KAFKA_V_VALUE(value, hop->size),
                                            RD_KAFKA_V_HEADER("traceparent", traceparent, sizeof traceparent - 1),
                                            RD_KAFKA_V_OPAQUE(source_of(hop->index, message)), RD_KAFKA_V_END)) ==
                   RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                struct timespec pause = {0, 1000000};
                nanosleep(&pause, NULL);
            }
            if (err) { fprintf(stderr, "produce: %s\n", rd_kafka_err2str(err)); exit(1); }
            consumed++;
        }
        rd_kafka_message_destroy(message);
    }
    free(value);
    return NULL;
}

static int pipeline_floor(int argc, char **argv) {
    const char *bootstrap = argv[2], *in = argv[3], *mid = argv[4], *out = argv[5], *group = argv[7];
    long count = atol(argv[6]);
    char **properties = argv + 8;
    int property_count = argc - 8;
    char group1[256], group2[256];
    snprintf(group1, sizeof group1, "%s.1", group);
    snprintf(group2, sizeof group2, "%s.2", group);

    rd_kafka_t *feeder = new_producer(bootstrap, "1", properties, property_count);
    rd_kafka_t *producer = new_producer(bootstrap, "1", properties, property_count);
    struct hop hops[2] = {
        {0, new_consumer(bootstrap, group1, in, properties, property_count), producer, NULL, 520, count},
        {1, new_consumer(bootstrap, group2, mid, properties, property_count), producer, NULL, 1165, count},
    };
    hop_inputs[0] = rd_kafka_topic_new(hops[0].consumer, in, NULL);
    hop_inputs[1] = rd_kafka_topic_new(hops[1].consumer, mid, NULL);
    hops[0].output = rd_kafka_topic_new(producer, mid, NULL);
    hops[1].output = rd_kafka_topic_new(producer, out, NULL);
    rd_kafka_topic_t *input = rd_kafka_topic_new(feeder, in, NULL);

    /* Both groups have their partitions before the clock starts, as the pipeline is ready before the benchmark feeds it. */
    for (int i = 0; i < 2; i++) {
        rd_kafka_topic_partition_list_t *assignment = NULL;
        while (!assignment || assignment->cnt == 0) {
            if (assignment) rd_kafka_topic_partition_list_destroy(assignment);
            rd_kafka_message_t *message = rd_kafka_consumer_poll(hops[i].consumer, 100);
            if (message) {
                fprintf(stderr, "hop %d: a record before the clock started (reuse of a topic?)\n", i + 1);
                return 1;
            }
            rd_kafka_assignment(hops[i].consumer, &assignment);
        }
        rd_kafka_topic_partition_list_destroy(assignment);
    }

    pthread_t threads[2];
    double started = now_seconds();
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, run_hop, &hops[i]);
    char value[191];
    memset(value, 'x', sizeof value);
    for (long number = 0; number < count; number++) {
        char key[16];
        int key_length = snprintf(key, sizeof key, "c%ld", number % 10000);
        while (rd_kafka_produce(input, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, value, sizeof value, key,
                                (size_t)key_length, NULL) == -1) {
            rd_kafka_poll(feeder, 1);
            rd_kafka_poll(producer, 0);
        }
        if (number % 64 == 0) {
            rd_kafka_poll(feeder, 0);
            rd_kafka_poll(producer, 0);
        }
    }
    long progress = -1;
    double progressed = now_seconds();
    while (atomic_load(&delivered[1]) + atomic_load(&failed) < count) {
        rd_kafka_poll(producer, 10);
        rd_kafka_poll(feeder, 0);
        long now_delivered = atomic_load(&delivered[0]) + atomic_load(&delivered[1]);
        if (now_delivered != progress) {
            progress = now_delivered;
            progressed = now_seconds();
        } else if (now_seconds() - progressed > 10) {
            fprintf(stderr, "pipeline floor: no delivery for 10 s: hop 1 %ld, hop 2 %ld of %ld delivered, %d in the producer's queue\n",
                    atomic_load(&delivered[0]), atomic_load(&delivered[1]), count, rd_kafka_outq_len(producer));
            return 1;
        }
    }
    double seconds = now_seconds() - started;
    atomic_store(&stopping, true);
    printf("pipeline-floor-c: %ld messages in %.3f s = %.0f messages/s\n", count, seconds, (double)count / seconds);
    long failures = atomic_load(&failed);
    if (failures) fprintf(stderr, "%ld deliveries failed\n", failures);

    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    rd_kafka_flush(feeder, 10000);
    rd_kafka_flush(producer, 10000);
    rd_kafka_topic_destroy(input);
    for (int i = 0; i < 2; i++) {
        rd_kafka_topic_destroy(hop_inputs[i]);
        rd_kafka_topic_destroy(hops[i].output);
        close_consumer(hops[i].consumer);
    }
    rd_kafka_destroy(feeder);
    rd_kafka_destroy(producer);
    return failures ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc == 7) return passthrough(argv);
    if (argc >= 8 && strcmp(argv[1], "--pipeline-floor") == 0) return pipeline_floor(argc, argv);
    fprintf(stderr, "usage: %s BOOTSTRAP IN OUT COUNT SIZE GROUP\n"
                    "       %s --pipeline-floor BOOTSTRAP IN MID OUT COUNT GROUP [name=value ...]\n",
            argv[0], argv[0]);
    return 2;
}
