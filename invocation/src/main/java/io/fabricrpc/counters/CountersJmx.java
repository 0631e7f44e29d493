package io.fabricrpc.counters;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * A process's {@link ProcessCounters} as a read-only MBean of the platform MBean server, named
 * {@code io.fabricrpc:type=Counters,rank=R,instance=N,job="host:port"}: one long attribute per counter type
 * ({@code CallsSent}, {@code CallsRun}, {@code BytesSent}, ...) plus {@code Rank}, {@code Instance} and {@code Job}.
 * Every read is a load of a published total: JMX never reaches the call path.
 */
public final class CountersJmx implements DynamicMBean {
    public static final String DOMAIN = "io.fabricrpc";

    private final ProcessCounters counters;
    private final ObjectName name;
    private final MBeanInfo info;

    private CountersJmx(ProcessCounters counters) throws JMException {
        this.counters = counters;
        this.name = objectName(counters);
        List<MBeanAttributeInfo> attributes = new ArrayList<>();
        attributes.add(new MBeanAttributeInfo("Rank", "int", "this process's rank", true, false, false));
        attributes.add(new MBeanAttributeInfo("Instance", "int", "fabric number within this JVM", true, false, false));
        attributes.add(new MBeanAttributeInfo("Job", "java.lang.String", "the job's coordinator host:port", true,
                false, false));
        for (int type = 1; type <= CounterTypes.MAX_TYPE; type++) {
            attributes.add(new MBeanAttributeInfo(CounterTypes.name(type), "long", (CounterTypes.isGauge(type)
                    ? "current level" : "count") + " over the process's counters of this type, as last published",
                    true, false, false));
        }
        this.info = new MBeanInfo(CountersJmx.class.getName(), "fabricrpc process counters, as the counters file"
                + " publishes them", attributes.toArray(MBeanAttributeInfo[]::new), null, null, null);
    }

    /** The name the MBean of {@code counters} is registered under. */
    public static ObjectName objectName(ProcessCounters counters) throws JMException {
        return new ObjectName(DOMAIN + ":type=Counters,rank=" + counters.rank() + ",instance=" + counters.instance()
                + ",job=" + ObjectName.quote(counters.jobId()));
    }

    /** Registers the MBean of {@code counters}; null (a warning) if it cannot: a job never fails for its metrics. */
    static CountersJmx register(ProcessCounters counters) {
        try {
            CountersJmx bean = new CountersJmx(counters);
            ManagementFactory.getPlatformMBeanServer().registerMBean(bean, bean.name);
            return bean;
        } catch (JMException | RuntimeException e) {
            System.getLogger("fabricrpc").log(System.Logger.Level.WARNING, "rank " + counters.rank()
                    + ": counters not exported to JMX (" + CountersConfig.JMX + "=false silences this): " + e);
            return null;
        }
    }

    /** Removes the MBean; idempotent. */
    void unregister() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
        } catch (JMException e) {
            // unregistered meanwhile by someone else: nothing left to remove
        }
    }

    public ObjectName name() {
        return name;
    }

    @Override
    public Object getAttribute(String attribute) throws AttributeNotFoundException {
        switch (attribute) {
            case "Rank":
                return counters.rank();
            case "Instance":
                return counters.instance();
            case "Job":
                return counters.jobId();
            default:
                for (int type = 1; type <= CounterTypes.MAX_TYPE; type++) {
                    if (CounterTypes.name(type).equals(attribute)) {
                        return counters.total(type);
                    }
                }
                throw new AttributeNotFoundException("no attribute " + attribute + " in " + name);
        }
    }

    @Override
    public AttributeList getAttributes(String[] attributes) {
        AttributeList list = new AttributeList();
        for (String attribute : attributes) {
            try {
                list.add(new Attribute(attribute, getAttribute(attribute)));
            } catch (AttributeNotFoundException e) {
                // JMX convention: an unknown attribute is left out of the list
            }
        }
        return list;
    }

    @Override
    public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
        throw new AttributeNotFoundException(attribute.getName() + " is read-only");
    }

    @Override
    public AttributeList setAttributes(AttributeList attributes) {
        return new AttributeList();
    }

    @Override
    public Object invoke(String actionName, Object[] params, String[] signature) {
        throw new UnsupportedOperationException("no operations: " + actionName);
    }

    @Override
    public MBeanInfo getMBeanInfo() {
        return info;
    }
}
