package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

import java.util.function.Consumer;

/**
 * Where results awaiting acknowledgement go once they outgrow their share of the heap (a quarter
 * of the memory budget), so that an instance nobody reads for hours, a million results long, does
 * not live in the dispatcher's heap or stop it dispatching (docs/reliability.md, "Results kept for
 * later"). The scheduler calls it on its own thread; an implementation keeps what it is given on
 * disk, in order. {@link #NONE} keeps nothing: results then stay in memory under the budget's brakes.
 */
public interface ResultSpill {

    /** Keeps {@code result} of the instance; false if it cannot (full, or failing): it then stays in memory. */
    boolean append(long instanceId, Message.DeliveredResult result);

    /** Hands over, in the order appended, every kept result of the instance whose seq is above {@code afterSeq}. */
    void forEach(long instanceId, long afterSeq, Consumer<Message.DeliveredResult> each);

    /** Forgets the instance's results (all acknowledged, or the instance is gone). */
    void drop(long instanceId);

    /** Bytes kept now. */
    long bytes();

    ResultSpill NONE = new ResultSpill() {
        @Override
        public boolean append(long instanceId, Message.DeliveredResult result) {
            return false;
        }

        @Override
        public void forEach(long instanceId, long afterSeq, Consumer<Message.DeliveredResult> each) {
        }

        @Override
        public void drop(long instanceId) {
        }

        @Override
        public long bytes() {
            return 0;
        }
    };
}
