package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link Link} for tests with a real scheduler thread: keeps every message delivered to it, and
 * can be read from the test's thread (unlike {@link FakeLink}, for the single-threaded harness).
 */
public final class RecordingLink extends BufferedLink {
    private final List<Message> received = new CopyOnWriteArrayList<>();

    @Override
    protected void deliver(List<Message> batch) {
        received.addAll(batch);
    }

    @Override
    protected void closed(Message.ErrorMessage error) {
    }

    @Override
    public String remote() {
        return "recording";
    }

    @Override
    public String remoteHost() {
        return "127.0.0.1";
    }

    /** The messages of this type delivered so far, in order. */
    public <T extends Message> List<T> of(Class<T> type) {
        return received.stream().filter(type::isInstance).map(type::cast).toList();
    }
}
