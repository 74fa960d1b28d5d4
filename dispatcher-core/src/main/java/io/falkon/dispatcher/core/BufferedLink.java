package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

import java.util.ArrayList;
import java.util.List;

/**
 * A {@link Link} that gathers a batch's messages and hands them over as one list: a transport
 * says only how a batch is sent and what closing means. Once closed it takes nothing more (what the
 * scheduler still enqueues before it hears of the end is dropped) and closes only once.
 */
public abstract class BufferedLink implements Link {
    private List<Message> buffered = new ArrayList<>();
    private boolean closed;

    @Override
    public final boolean enqueue(Message message) {
        if (closed) {
            return false;
        }
        buffered.add(message);
        return buffered.size() == 1;
    }

    @Override
    public final Runnable takeFlush() {
        if (closed || buffered.isEmpty()) {
            return null;
        }
        List<Message> out = take();
        return () -> deliver(out);
    }

    @Override
    public final void close(Message.ErrorMessage error) {
        if (closed) {
            return;
        }
        closed = true;
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
