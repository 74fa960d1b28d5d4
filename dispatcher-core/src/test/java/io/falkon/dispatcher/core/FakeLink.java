package io.falkon.dispatcher.core;

import io.falkon.protocol.Message;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** A {@link Link} that records what the scheduler sends (a test double for a connection). */
public final class FakeLink implements Link {
    private final String name;
    private final List<Message> buffered = new ArrayList<>();
    public final List<Message> sent = new ArrayList<>();
    public int flushes;
    public Message.ErrorMessage closedWith;
    public boolean closed;

    public FakeLink(String name) {
        this.name = name;
    }

    @Override
    public boolean enqueue(Message message) {
        buffered.add(message);
        return buffered.size() == 1;
    }


    @Override
    public Runnable takeFlush() {
        if (buffered.isEmpty()) {
            return null;
        }
        List<Message> out = new ArrayList<>(buffered);
        buffered.clear();
        return () -> {
            sent.addAll(out);
            flushes++;
        };
    }

    @Override
    public void close(Message.ErrorMessage error) {
        if (closed) {
            return; // like a real connection: closes once, with the first reason
        }
        Runnable f = takeFlush();
        if (f != null) {
            f.run();
        }
        closedWith = error;
        closed = true;
    }

    @Override
    public String remote() {
        return name;
    }

    @Override
    public String remoteHost() {
        return "127.0.0.1";
    }

    public <T extends Message> List<T> sent(Class<T> type) {
        return sent.stream().filter(type::isInstance).map(type::cast).collect(Collectors.toList());
    }

    /** Removes and returns everything sent so far. */
    public List<Message> drain() {
        List<Message> out = new ArrayList<>(sent);
        sent.clear();
        return out;
    }

    public int buffered() {
        return buffered.size();
    }
}
