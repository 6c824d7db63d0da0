/*
 * Creates what a 5.x conformance scenario needs on the reference broker before the
 * official Python client may touch it (a 5.5.0 proxy refuses a consumer of a group that
 * does not exist, and %DLQ%<group> exists only after the first dead letter):
 *
 *   java -cp <jars>:<classes> Setup5 <namesrv> <setup.json>
 *
 * setup.json: {"topic", "message_type" (NORMAL, FIFO, DELAY), "group", "readers" (more
 * groups, for the dead-letter reader), "retry_max_times", "next_ms" (the group's
 * customized retry policy), "fifo" (the group consumes in order)}.
 */

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.remoting.protocol.subscription.CustomizedRetryPolicy;
import org.apache.rocketmq.remoting.protocol.subscription.GroupRetryPolicy;
import org.apache.rocketmq.remoting.protocol.subscription.GroupRetryPolicyType;
import org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

public final class Setup5 {
    private static final int READ_WRITE = 6;

    private Setup5() {
    }

    public static void main(String[] args) throws Exception {
        JSONObject spec = JSON.parseObject(Files.readString(Path.of(args[1]), StandardCharsets.UTF_8));
        String group = spec.getString("group");
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(args[0]);
        admin.setInstanceName("setup-" + group);
        admin.start();
        try {
            String broker = admin.examineBrokerClusterInfo().getBrokerAddrTable().values()
                .iterator().next().selectBrokerAddr();
            topic(admin, broker, spec.getString("topic"), spec.getString("message_type"));
            topic(admin, broker, "%DLQ%" + group, "NORMAL");
            SubscriptionGroupConfig config = new SubscriptionGroupConfig();
            config.setGroupName(group);
            config.setRetryMaxTimes(spec.getIntValue("retry_max_times"));
            config.setConsumeMessageOrderly(spec.getBooleanValue("fifo"));
            long[] next = spec.getJSONArray("next_ms").stream()
                .mapToLong(v -> ((Number) v).longValue()).toArray();
            config.setGroupRetryPolicy(new GroupRetryPolicy());
            config.getGroupRetryPolicy().setType(GroupRetryPolicyType.CUSTOMIZED);
            config.getGroupRetryPolicy().setCustomizedRetryPolicy(new CustomizedRetryPolicy(next));
            admin.createAndUpdateSubscriptionGroupConfig(broker, config);
            for (Object reader : spec.getJSONArray("readers")) {
                SubscriptionGroupConfig readerConfig = new SubscriptionGroupConfig();
                readerConfig.setGroupName((String) reader);
                admin.createAndUpdateSubscriptionGroupConfig(broker, readerConfig);
            }
        } finally {
            admin.shutdown();
        }
        System.exit(0);
    }

    private static void topic(DefaultMQAdminExt admin, String broker, String name, String type)
        throws Exception {
        TopicConfig config = new TopicConfig(name, 1, 1, READ_WRITE);
        config.setAttributes(Map.of("+message.type", type));
        admin.createAndUpdateTopicConfig(broker, config);
    }
}
