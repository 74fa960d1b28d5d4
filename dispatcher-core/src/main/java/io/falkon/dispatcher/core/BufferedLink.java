package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

import java.util.ArrayList;
import java.util.List;

/**
 * A {@link Link} that gathers a batch's messages and hands them over as one list: a transport
 * says only how a batch is sent and what closing means.
 */
public abstract class BufferedLink implements Link {
    private List<Message> buffered = new ArrayList<>();

    @Override
    public final boolean enqueue(Message message) {
        buffered.add(message);
        return buffered.size() == 1;
    }

    @Override
    public final Runnable takeFlush() {
        if (buffered.isEmpty()) {
            return null;
        }
        List<Message> out = take();
        return () -> deliver(out);
    }

    @Override
    public final void close(Message.ErrorMessage error) {
        List<Message> out = take();
        if (!out.isEmpty()) {
            deliver(out);
        }
        closed(error);
    }

    private List<Message> take() {
        List<Message> out = buffered;
        buffered = new ArrayList<>(Math.max(4, out.size()));
        return out;
    }

    /** Sends a batch's messages in order (called from whichever thread sends batches). */
    protected abstract void deliver(List<Message> batch);

    /** The scheduler closed the link after the last batch: {@code error} says why (null: no reason to give). */
    protected abstract void closed(Message.ErrorMessage error);
}
