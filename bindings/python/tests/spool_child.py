"""The producer process of test_spool.py: spools records START.. N-1, each
with its number as the cursor, resuming after the recovered cursor. The
test SIGKILLs it at random points and starts it again."""

import sys

import exactly

directory, servers, topic, n = sys.argv[1], sys.argv[2], sys.argv[3], \
    int(sys.argv[4])
producer = exactly.SpooledProducer(directory, servers, "spool-crash-test",
                                   max_batch_time=0.02,
                                   max_batch_records=50)
cursor = producer.recovered_cursor
start = int(cursor) + 1 if cursor else 0
print(f"start {start}", flush=True)
for i in range(start, n):
    producer.send(topic, key=str(i), value=str(i), cursor=str(i))
    if i % 25 == 0:
        print(f"spooled {i}", flush=True)
producer.flush(timeout=120)
print("done", flush=True)
producer.close()
