#ifndef NOTIFY_CRDKAFKA_SHIM_H
#define NOTIFY_CRDKAFKA_SHIM_H
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#endif
