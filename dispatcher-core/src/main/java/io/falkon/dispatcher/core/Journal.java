package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

import java.util.function.Consumer;

/**
 * Where the scheduler records what must survive a restart: instances, accepted tasks, final
 * results, acknowledgements. The scheduler calls the record methods during a batch and
 * {@link #commit} at its end with the action that sends the batch's replies; an implementation
 * runs that action once the records are as durable as its policy promises. {@link #NONE} keeps
 * nothing and sends at once.
 */
public interface Journal {

    /** An instance with a lease (a new one has no accepted ids yet; snapshots carry them). */
    void instanceCreated(InstanceRecord instance);

    void accepted(long instanceId, long clientTaskId, long submittedMicros, byte[] spec);

    /** A task's final result (after any retries); retained for redelivery until acknowledged. */
    void completed(long instanceId, Message.DeliveredResult result);

    void acked(long instanceId, long upToSeq);

    /**
     * A finished producer's keys (the object ids its outputs declare, its name): produced, or failed
     * with {@code failedProducer} the task that failed first upstream. Tasks submitted later (after a
     * restart too) find them by these.
     */
    void produced(long instanceId, String[] objectIds, String name, boolean ok, long failedProducer);

    void destroyed(long instanceId);

    /** Ends a batch: make its records durable (per policy), then run {@code send}. */
    void commit(Runnable send);

    /** Whether the journal has grown enough that rewriting only the live state would pay. */
    default boolean wantsCompaction() {
        return false;
    }

    /**
     * Replaces the journal's contents with the live state the scheduler hands over, as records
     * written through the given snapshot (called on the scheduler thread between batches).
     */
    default void compact(Consumer<Journal> snapshot) {
    }

    Journal NONE = new Journal() {
        @Override
        public void instanceCreated(InstanceRecord instance) {
        }

        @Override
        public void accepted(long instanceId, long clientTaskId, long submittedMicros, byte[] spec) {
        }

        @Override
        public void completed(long instanceId, Message.DeliveredResult result) {
        }

        @Override
        public void acked(long instanceId, long upToSeq) {
        }

        @Override
        public void produced(long instanceId, String[] objectIds, String name, boolean ok, long failedProducer) {
        }

        @Override
        public void destroyed(long instanceId) {
        }

        @Override
        public void commit(Runnable send) {
            send.run();
        }
    };
}
