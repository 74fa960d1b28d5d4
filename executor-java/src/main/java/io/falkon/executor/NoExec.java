package io.falkon.executor;

import io.falkon.protocol.Execution;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.Message;
import io.falkon.protocol.TaskSpecCodec;
import io.falkon.protocol.TaskStatus;
import io.falkon.protocol.time.Clock;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** What a no-exec executor (benchmarking only) does with the tasks it is sent. */
final class NoExec {
    private static final byte[] NO_BYTES = new byte[0];

    private final EventLoop loop;
    private final Supplier<Channel> channel;
    private final boolean sleep;

    /**
     * @param channel the connection now (null while reconnecting)
     * @param sleep   emulate {@code sleep S} tasks' length
     */
    NoExec(EventLoop loop, Supplier<Channel> channel, boolean sleep) {
        this.loop = loop;
        this.channel = channel;
        this.sleep = sleep;
    }

    /**
     * Completes tasks without running them, all at once in one RESULT frame; with sleep emulation
     * ({@link ExecutorConfig#noExecSleep()}) a task {@code sleep S} after S seconds on the loop's
     * timer (tasks of one length share a frame). A delayed result is dropped if its connection went.
     */
    void complete(Channel ch, List<Message.DispatchedTask> tasks) {
        Map<Long, List<Message.DispatchedTask>> byDelay = new HashMap<>();
        for (Message.DispatchedTask t : tasks) {
            long delay = sleep ? emulatedMillis(t) : 0;
            byDelay.computeIfAbsent(delay, k -> new ArrayList<>()).add(t);
        }
        byDelay.forEach((delay, group) -> {
            long started = Clock.SYSTEM.nowMicros();
            if (delay == 0) {
                send(ch, group, started);
            } else {
                loop.schedule(() -> send(ch, group, started), delay, TimeUnit.MILLISECONDS);
            }
        });
    }

    private void send(Channel ch, List<Message.DispatchedTask> group, long startedMicros) {
        if (channel.get() != ch || !ch.isActive()) {
            return; // its connection is gone: the dispatcher has re-queued these tasks
        }
        long now = Clock.SYSTEM.nowMicros();
        List<Message.TaskResult> done = new ArrayList<>(group.size());
        int credits = 0;
        for (Message.DispatchedTask t : group) {
            credits += TaskSpecCodec.cores(t.spec());
            done.add(new Message.TaskResult(t.taskId(), t.attempt(), new Execution(TaskStatus.EXITED, 0,
                    Execution.NO_EXEC, startedMicros, now, NO_BYTES, NO_BYTES, "", ExtField.NONE)));
        }
        ch.writeAndFlush(new Message.Result(credits, done), ch.voidPromise());
    }

    /** How long a {@code sleep S} task would run, in ms; 0 for anything else or anything undecodable. */
    private static long emulatedMillis(Message.DispatchedTask t) {
        try {
            List<String> argv = TaskSpecCodec.decode(t.spec()).argv();
            if (argv.size() == 2 && (argv.get(0).equals("sleep") || argv.get(0).endsWith("/sleep"))) {
                return Math.max(0, Math.round(Double.parseDouble(argv.get(1)) * 1000));
            }
        } catch (RuntimeException e) {
            // not a sleep task: completes at once like any other in no-exec mode
        }
        return 0;
    }
}
