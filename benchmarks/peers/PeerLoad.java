/*
 * The Java client workloads of benchmarks/rocketmq_peers.py, against Apache RocketMQ:
 *
 *   java -cp <jars>:<classes> PeerLoad setup   <namesrv> <topic> <queues> <group>...
 *   java -cp <jars>:<classes> PeerLoad produce <namesrv> <topic> <count> <size>
 *   java -cp <jars>:<classes> PeerLoad consume <namesrv> <topic> <group> <count> <batch>
 *
 * setup creates the topic (NORMAL messages) and the consumer groups; produce sends one
 * message outside the clock (connection, route), then `count` messages of `size` bytes
 * with send(msg, callback) and the client's back-pressure for async sends on (at most
 * 256 in flight), and stops the clock when every callback came; consume runs a
 * DefaultMQPushConsumer (concurrent, from the first offset, batch size `batch`) whose
 * listener returns CONSUME_SUCCESS, from its first call to the `count`-th message.
 * produce and consume print one JSON line: messages a second and the JVM's CPU time a
 * message (all its threads, the JIT's and the collector's included).
 */

import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

public final class PeerLoad {
    private static final int READ_WRITE = 6;
    private static final long TIMEOUT_S = 300;
    private static final int IN_FLIGHT = 256;

    private PeerLoad() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "setup" -> setup(args);
            case "produce" -> produce(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
            case "consume" -> consume(args[1], args[2], args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]));
            default -> throw new IllegalArgumentException("no workload " + args[0]);
        }
        System.exit(0);
    }

    private static void setup(String[] args) throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(args[1]);
        admin.setInstanceName("peer-setup-" + args[2]);
        admin.start();
        try {
            String broker = admin.examineBrokerClusterInfo().getBrokerAddrTable().values()
                .iterator().next().selectBrokerAddr();
            int queues = Integer.parseInt(args[3]);
            TopicConfig topic = new TopicConfig(args[2], queues, queues, READ_WRITE);
            topic.setAttributes(Map.of("+message.type", "NORMAL"));
            admin.createAndUpdateTopicConfig(broker, topic);
            for (int i = 4; i < args.length; i++) {
                SubscriptionGroupConfig group = new SubscriptionGroupConfig();
                group.setGroupName(args[i]);
                admin.createAndUpdateSubscriptionGroupConfig(broker, group);
            }
        } finally {
            admin.shutdown();
        }
    }

    private static void produce(String namesrv, String topic, int count, int size) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer("peer-producer");
        producer.setNamesrvAddr(namesrv);
        // the client's own bound on async sends in flight: without it, with its default
        // bound and with 1,024, a burst of sends waited over 200 ms in the broker's queue
        // and some failed with "[TIMEOUT_CLEAN_QUEUE] broker busy" on a 2-core machine
        producer.setEnableBackpressureForAsyncMode(true);
        producer.setBackPressureForAsyncSendNum(IN_FLIGHT);
        producer.start();
        try {
            producer.send(new Message(topic, "warm-up".getBytes()));
            byte[] body = new byte[size];
            CountDownLatch done = new CountDownLatch(count);
            AtomicInteger failed = new AtomicInteger();
            StringBuilder firstError = new StringBuilder();
            SendCallback callback = new SendCallback() {
                @Override
                public void onSuccess(SendResult result) {
                    done.countDown();
                }

                @Override
                public void onException(Throwable error) {
                    if (failed.incrementAndGet() == 1) {
                        firstError.append(error);
                    }
                    done.countDown();
                }
            };
            long start = System.nanoTime();
            long cpu = cpuNanos();
            for (int i = 0; i < count; i++) {
                producer.send(new Message(topic, body), callback);
            }
            if (!done.await(TIMEOUT_S, TimeUnit.SECONDS) || failed.get() > 0) {
                throw new IllegalStateException("sends failed: " + failed.get() + ", first: " + firstError);
            }
            print(count, start, cpu);
        } finally {
            producer.shutdown();
        }
    }

    private static void consume(String namesrv, String topic, String group, int count, int batch)
        throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
        consumer.setNamesrvAddr(namesrv);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setConsumeMessageBatchMaxSize(batch);
        consumer.subscribe(topic, "*");
        CountDownLatch done = new CountDownLatch(1);
        AtomicInteger seen = new AtomicInteger();
        AtomicLong start = new AtomicLong();
        AtomicLong cpu = new AtomicLong();
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            if (start.get() == 0 && start.compareAndSet(0, System.nanoTime())) {
                cpu.set(cpuNanos());
            }
            if (seen.addAndGet(msgs.size()) >= count) {
                done.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        try {
            if (!done.await(TIMEOUT_S, TimeUnit.SECONDS)) {
                throw new IllegalStateException("consumed " + seen.get() + " of " + count);
            }
            print(count, start.get(), cpu.get());
        } finally {
            consumer.shutdown();
        }
    }

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    }

    private static void print(int count, long startNanos, long cpuStartNanos) {
        double elapsed = (System.nanoTime() - startNanos) / 1e9;
        double cpuUs = (cpuNanos() - cpuStartNanos) / 1e3 / count;
        System.out.printf("{\"rate\": %.1f, \"cpu_us\": %.2f}%n", count / elapsed, cpuUs);
        System.out.flush();
    }
}
