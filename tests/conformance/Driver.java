/*
 * The conformance suite's driver: runs one scenario on Apache RocketMQ through its own 4.x
 * Java client and prints what the application observed as one line of JSON on stdout.
 *
 *   java -cp 'jars/*:classes' Driver <namesrv host:port> <scenario.json>
 *
 * The scenario's shape is tests/conformance/scenario.py's; the output is the "raw
 * observations" that tests/conformance/history.py turns into a history, the same shape
 * the rmqcompat runner produces. Logs go to stderr.
 */

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONArray;
import com.alibaba.fastjson2.JSONObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

public final class Driver {
    private static final int READ_WRITE = 6;
    /** Where RocketMQ keeps a copy of a half message discarded at the check maximum. */
    private static final String CHECK_MAX_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC";
    private final String namesrv;
    private final JSONObject scenario;
    private final String topic;
    private final String group;
    private final Map<String, JSONArray> replies = new HashMap<>();
    private final Map<String, Integer> attempts = new HashMap<>();
    private final Map<String, Integer> checks = new HashMap<>();
    private final JSONArray deliveries = new JSONArray();
    private final JSONArray deadLetters = new JSONArray();
    private final JSONArray checkCalls = new JSONArray();
    private final JSONArray localCalls = new JSONArray();
    private final JSONArray sendErrors = new JSONArray();
    private final JSONArray checkMaxCopies = new JSONArray();
    private final JSONObject sent = new JSONObject();
    private volatile long lastEventMs = System.currentTimeMillis();

    private Driver(String namesrv, JSONObject scenario) {
        this.namesrv = namesrv;
        this.scenario = scenario;
        this.topic = scenario.getString("topic");
        this.group = scenario.getString("group");
        JSONObject byKey = scenario.getJSONObject("replies");
        for (String key : byKey.keySet()) {
            replies.put(key, byKey.getJSONArray(key));
        }
    }

    public static void main(String[] args) throws Exception {
        String text = Files.readString(Path.of(args[1]), StandardCharsets.UTF_8);
        Driver driver = new Driver(args[0], JSON.parseObject(text));
        JSONObject raw = driver.run();
        System.out.println(raw.toJSONString());
        System.out.flush();
        System.exit(0);
    }

    private JSONObject run() throws Exception {
        createTopics();
        DefaultMQPushConsumer consumer = consumer();
        DefaultMQPushConsumer dlqReader = reader("%DLQ%" + group, deadLetters);
        boolean transactional = scenario.getJSONObject("transaction") != null;
        DefaultMQPushConsumer checkMaxReader = transactional ? reader(CHECK_MAX_TOPIC, checkMaxCopies) : null;
        boolean consumerFirst = scenario.getBooleanValue("consumer_first");
        if (consumerFirst) {
            consumer.start();
            Thread.sleep(scenario.getLongValue("consumer_ready_ms"));
        }
        // a transactional producer stays up to answer the broker's checks
        TransactionMQProducer producer = null;
        if (transactional) {
            producer = sendTransactional();
        } else {
            send();
        }
        if (!consumerFirst) {
            Thread.sleep(scenario.getLongValue("queue_age_ms"));
            consumer.start();
        }
        dlqReader.start();
        if (checkMaxReader != null) {
            checkMaxReader.start();
        }
        awaitQuiet();
        consumer.shutdown();
        dlqReader.shutdown();
        if (producer != null) {
            checkMaxReader.shutdown();
            producer.shutdown();
        }
        JSONObject raw = new JSONObject();
        raw.put("sent", sent);
        raw.put("deliveries", deliveries);
        raw.put("dlq", deadLetters);
        raw.put("checks", checkCalls);
        raw.put("locals", localCalls);
        raw.put("send_errors", sendErrors);
        raw.put("check_max", checkMaxCopies);
        return raw;
    }

    private void createTopics() throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(namesrv);
        admin.setInstanceName("admin-" + group);
        admin.start();
        try {
            String broker = admin.examineBrokerClusterInfo().getBrokerAddrTable().values()
                .iterator().next().selectBrokerAddr();
            int queues = scenario.getIntValue("queues");
            if (scenario.getBooleanValue("create_topic")) {
                admin.createAndUpdateTopicConfig(broker, new TopicConfig(topic, queues, queues, READ_WRITE));
            }
            // %RETRY% and %DLQ% exist only after the first send-back and dead letter; the
            // client would learn their routes only at its next name-server poll.
            admin.createAndUpdateTopicConfig(broker, new TopicConfig("%RETRY%" + group, 1, 1, READ_WRITE));
            admin.createAndUpdateTopicConfig(broker, new TopicConfig("%DLQ%" + group, 1, 1, READ_WRITE));
        } finally {
            admin.shutdown();
        }
        Thread.sleep(500);  // the name server learns the routes with the next registration
    }

    private DefaultMQPushConsumer consumer() throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
        consumer.setNamesrvAddr(namesrv);
        consumer.setInstanceName("consumer-" + group);
        consumer.setPollNameServerInterval(1000);
        consumer.setConsumeFromWhere("LAST".equals(scenario.getString("consume_from"))
            ? ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET : ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setConsumeMessageBatchMaxSize(scenario.getIntValue("batch_size"));
        consumer.setMaxReconsumeTimes(scenario.getIntValue("max_reconsume_times"));
        if ("BROADCASTING".equals(scenario.getString("model"))) {
            consumer.setMessageModel(MessageModel.BROADCASTING);
        }
        consumer.subscribe(topic, scenario.getString("subscription"));
        if (scenario.getBooleanValue("orderly")) {
            consumer.registerMessageListener((MessageListenerOrderly) this::consumeOrderly);
        } else {
            consumer.registerMessageListener((MessageListenerConcurrently) this::consumeConcurrently);
        }
        return consumer;
    }

    /** A consumer of its own group that records every message of {@code source} into {@code into}. */
    private DefaultMQPushConsumer reader(String source, JSONArray into) throws Exception {
        String name = "reader-" + Integer.toHexString(source.hashCode()) + "-" + group;
        DefaultMQPushConsumer reader = new DefaultMQPushConsumer(name);
        reader.setNamesrvAddr(namesrv);
        reader.setInstanceName(name);
        reader.setPollNameServerInterval(1000);
        reader.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        reader.subscribe(source, "*");
        reader.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            synchronized (this) {
                for (MessageExt msg : msgs) {
                    // the check-max topic is the broker's, shared by every scenario
                    if (!CHECK_MAX_TOPIC.equals(source) || topic.equals(msg.getProperty("REAL_TOPIC"))) {
                        into.add(observe(msg));
                    }
                }
                lastEventMs = System.currentTimeMillis();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        return reader;
    }

    private void send() throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer("producer-" + group);
        producer.setNamesrvAddr(namesrv);
        producer.setInstanceName("producer-" + group);
        producer.start();
        try {
            for (Object item : scenario.getJSONArray("messages")) {
                JSONObject spec = (JSONObject) item;
                long before = System.currentTimeMillis();
                try {
                    SendResult result = producer.send(message(spec));
                    record(spec.getString("key"), result.getMsgId(), before);
                } catch (Exception e) {
                    refused(spec.getString("key"), e);
                }
            }
        } finally {
            producer.shutdown();
        }
    }

    private TransactionMQProducer sendTransactional() throws Exception {
        TransactionMQProducer producer = new TransactionMQProducer("producer-" + group);
        producer.setNamesrvAddr(namesrv);
        producer.setInstanceName("producer-" + group);
        producer.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                return transactionReply(msg.getKeys(), localCalls, "local");
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                return transactionReply(msg.getKeys(), checkCalls, "checks");
            }
        });
        producer.start();
        for (Object item : scenario.getJSONArray("messages")) {
            JSONObject spec = (JSONObject) item;
            long before = System.currentTimeMillis();
            try {
                SendResult result = producer.sendMessageInTransaction(message(spec), null);
                record(spec.getString("key"), result.getMsgId(), before);
            } catch (Exception e) {
                refused(spec.getString("key"), e);
            }
        }
        return producer;
    }

    private synchronized LocalTransactionState transactionReply(String key, JSONArray calls, String which) {
        JSONObject call = new JSONObject();
        call.put("key", key);
        call.put("ms", System.currentTimeMillis());
        calls.add(call);
        lastEventMs = System.currentTimeMillis();
        JSONObject spec = scenario.getJSONObject("transaction").getJSONObject(key);
        String answer;
        if ("local".equals(which)) {
            answer = spec.getString("local");
        } else {
            JSONArray answers = spec.getJSONArray("checks");
            int n = checks.merge(key, 1, Integer::sum) - 1;
            answer = answers.isEmpty() ? "unknown" : answers.getString(Math.min(n, answers.size() - 1));
        }
        switch (answer) {
            case "commit": return LocalTransactionState.COMMIT_MESSAGE;
            case "rollback": return LocalTransactionState.ROLLBACK_MESSAGE;
            case "exception": throw new IllegalStateException("scenario: local transaction throws");
            default: return LocalTransactionState.UNKNOW;
        }
    }

    private Message message(JSONObject spec) {
        Message msg = new Message(topic, spec.getString("tags"), spec.getString("key"),
            spec.getString("body").getBytes(StandardCharsets.UTF_8));
        JSONObject props = spec.getJSONObject("properties");
        for (String name : props.keySet()) {
            // putUserProperty refuses RocketMQ's own names (CHECK_IMMUNITY_TIME_IN_SECONDS)
            MessageAccessor.putProperty(msg, name, props.getString(name));
        }
        if (spec.getIntValue("delay_level") > 0) {
            msg.setDelayTimeLevel(spec.getIntValue("delay_level"));
        }
        if (spec.getLongValue("deliver_after_ms") > 0) {
            msg.setDeliverTimeMs(System.currentTimeMillis() + spec.getLongValue("deliver_after_ms"));
        }
        return msg;
    }

    private synchronized void refused(String key, Exception e) {
        JSONObject entry = new JSONObject();
        entry.put("key", key);
        entry.put("error", String.valueOf(e));
        sendErrors.add(entry);
        lastEventMs = System.currentTimeMillis();
    }

    /** Records a send; its time is taken before the send call, as a delivery time counts. */
    private synchronized void record(String key, String msgId, long sentMs) {
        JSONObject entry = new JSONObject();
        entry.put("ms", sentMs);
        entry.put("msg_id", msgId);
        sent.put(key, entry);
        lastEventMs = System.currentTimeMillis();
    }

    private ConsumeConcurrentlyStatus consumeConcurrently(List<MessageExt> msgs, ConsumeConcurrentlyContext context) {
        JSONObject reply = deliver(msgs);
        if (reply.containsKey("delay_level")) {
            context.setDelayLevelWhenNextConsume(reply.getIntValue("delay_level"));
        }
        switch (reply.getString("kind")) {
            case "success":
                if (reply.containsKey("ack_index")) {
                    context.setAckIndex(reply.getIntValue("ack_index"));
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            case "later": return ConsumeConcurrentlyStatus.RECONSUME_LATER;
            case "exception": throw new IllegalStateException("scenario: listener throws");
            default: return null;
        }
    }

    private ConsumeOrderlyStatus consumeOrderly(List<MessageExt> msgs, ConsumeOrderlyContext context) {
        JSONObject reply = deliver(msgs);
        if (reply.containsKey("suspend_ms")) {
            context.setSuspendCurrentQueueTimeMillis(reply.getLongValue("suspend_ms"));
        }
        switch (reply.getString("kind")) {
            case "success": return ConsumeOrderlyStatus.SUCCESS;
            case "suspend": return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT;
            case "exception": throw new IllegalStateException("scenario: listener throws");
            default: return null;
        }
    }

    /** Records the batch's deliveries and returns the reply for its first message. */
    private synchronized JSONObject deliver(List<MessageExt> msgs) {
        long now = System.currentTimeMillis();
        JSONObject reply = null;
        int batch = deliveries.size();
        for (int pos = 0; pos < msgs.size(); pos++) {
            MessageExt msg = msgs.get(pos);
            String key = msg.getKeys();
            int attempt = attempts.merge(key, 1, Integer::sum) - 1;
            if (reply == null) {
                JSONArray answers = replies.getOrDefault(key, new JSONArray());
                reply = answers.isEmpty() ? JSON.parseObject("{\"kind\":\"success\"}")
                    : answers.getJSONObject(Math.min(attempt, answers.size() - 1));
            }
            JSONObject seen = observe(msg);
            seen.put("ms", now);
            seen.put("attempt", attempt);
            seen.put("batch", batch);
            seen.put("pos", pos);
            seen.put("reply", reply);
            deliveries.add(seen);
        }
        lastEventMs = now;
        return reply;
    }

    private static JSONObject observe(MessageExt msg) {
        JSONObject seen = new JSONObject();
        seen.put("key", msg.getKeys());
        seen.put("topic", msg.getTopic());
        seen.put("reconsume_times", msg.getReconsumeTimes());
        seen.put("msg_id", msg.getMsgId());
        seen.put("body", new String(msg.getBody(), StandardCharsets.UTF_8));
        seen.put("properties", new TreeMap<>(msg.getProperties()));
        return seen;
    }

    /** Waits until nothing happened for quiet_ms, counted from the first delivery (or from
     *  first_delivery_grace_ms after the start, for a scenario that delivers nothing). */
    private void awaitQuiet() throws InterruptedException {
        long start = System.currentTimeMillis();
        long quietMs = scenario.getLongValue("quiet_ms");
        long graceMs = scenario.getLongValue("first_delivery_grace_ms");
        long deadline = start + scenario.getLongValue("timeout_ms");
        while (System.currentTimeMillis() < deadline) {
            long now = System.currentTimeMillis();
            boolean started;
            synchronized (this) {
                started = !deliveries.isEmpty() || now - start >= graceMs;
            }
            if (started && now - lastEventMs >= quietMs) {
                return;
            }
            Thread.sleep(100);
        }
    }
}
