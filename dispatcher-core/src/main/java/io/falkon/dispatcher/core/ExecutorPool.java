package io.falkon.dispatcher.core;

import io.falkon.protocol.LogSafe;
import io.falkon.protocol.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * The registered executors: who they are, the credits they hold (and the round-robin ring of
 * those with credit), their health (the outcome window that suspends a black hole, and its end),
 * and what their caches hold (the {@link CacheIndex}, kept up to date here from their reports).
 */
final class ExecutorPool {
    private static final Logger log = LoggerFactory.getLogger(ExecutorPool.class);
    /** Most slots, and most credits, one executor may hold: far beyond any real node, far below overflow. */
    static final int MAX_CREDITS = 1 << 24;

    private final SchedulerConfig config;
    private final Map<Link, ExecutorState> byLink = new LinkedHashMap<>();
    private final Map<String, ExecutorState> byId = new HashMap<>();
    /** Executors that have credits, in round-robin order (entries without credit are dropped lazily). */
    private final ArrayDeque<ExecutorState> ring = new ArrayDeque<>();
    private final List<ExecutorWaiter> waiters = new ArrayList<>();
    private final CacheIndex index = new CacheIndex();
    /** Credits of executors that may get work (not suspended). */
    private int totalCredits;
    private int totalSlots;

    private record ExecutorWaiter(int count, CompletableFuture<Void> future) {
    }

    ExecutorPool(SchedulerConfig config) {
        this.config = config;
    }

    CacheIndex index() {
        return index;
    }

    /** Why {@code reg} cannot register, or null when it can. */
    static String problem(Message.Register reg) {
        if (reg.slots() < 1 || reg.slots() > MAX_CREDITS) {
            return "REGISTER.slots: must be 1.." + MAX_CREDITS + ", got " + reg.slots();
        }
        for (String attribute : new String[]{"memoryMiB", "diskMiB"}) {
            if (ExecutorState.advertised(reg, attribute) < 0) {
                return "REGISTER.attributes." + attribute + ": must be a number of MiB, got '"
                        + LogSafe.text(reg.attributes().get(attribute)) + "'";
            }
        }
        if (reg.executorId().isEmpty()) {
            return "REGISTER.executorId: empty";
        }
        return null;
    }

    /** The executor registered under {@code id} on another connection, if any. */
    ExecutorState byId(String id) {
        return byId.get(id);
    }

    ExecutorState byLink(Link link) {
        return byLink.get(link);
    }

    ExecutorState add(Link link, Message.Register reg, long tickMicros) {
        ExecutorState e = new ExecutorState(link, reg, tickMicros, config.suspendWindowMillis() * 1000);
        byLink.put(link, e);
        byId.put(e.id, e);
        totalSlots += e.slots;
        wakeWaiters();
        return e;
    }

    /** Completes (and forgets) each waiter whose count of executors is reached. */
    private void wakeWaiters() {
        Iterator<ExecutorWaiter> it = waiters.iterator();
        while (it.hasNext()) {
            ExecutorWaiter w = it.next();
            if (byId.size() >= w.count) {
                w.future.complete(null);
                it.remove();
            }
        }
    }

    /** Forgets the executor on {@code link} (its tasks are the caller's business); null if none. */
    ExecutorState remove(Link link) {
        ExecutorState e = byLink.remove(link);
        if (e == null) {
            return null;
        }
        byId.remove(e.id, e);
        if (e.eligible()) {
            totalCredits -= e.credits;
        }
        e.alive = false;
        totalSlots -= e.slots;
        e.credits = 0;
        index.removeAll(e);
        return e;
    }

    /** Adds credits; false (adding nothing) when they would take the executor over the limit. */
    boolean addCredits(ExecutorState e, int credits) {
        if (credits <= 0) {
            return true;
        }
        if (credits > MAX_CREDITS - e.credits) {
            return false;
        }
        e.credits += credits;
        if (e.eligible()) {
            totalCredits += credits;
            enterRing(e);
        }
        return true;
    }

    /** The credits an assignment uses: one per core of the task. */
    void useCredits(ExecutorState e, int n) {
        if (e.credits < n || !e.eligible()) {
            throw new IllegalStateException("executor " + e.id + " has not " + n + " credits or is suspended");
        }
        e.credits -= n;
        totalCredits -= n;
    }

    private void enterRing(ExecutorState e) {
        if (!e.inRing && e.credits > 0) {
            e.inRing = true;
            ring.addLast(e);
        }
    }

    /** The next executor with a credit, round robin; null when none has one. */
    ExecutorState nextWithCredit() {
        ExecutorState e;
        while ((e = ring.pollFirst()) != null) {
            if (e.credits > 0 && e.eligible()) {
                ring.addLast(e);
                return e;
            }
            e.inRing = false;
        }
        return null;
    }

    // ---- health ------------------------------------------------------------------------------

    /** Counts a result {@code e} returned for a task it ran (the attempt still current). */
    void returned(ExecutorState e) {
        e.completed++;
    }

    /**
     * Records an outcome; returns true when it suspended the executor: at least the configured
     * failures within the window, that share of its outcomes failed, and some other working
     * executor succeeded meanwhile (so the failures are this node's, not the tasks').
     */
    boolean recordOutcome(ExecutorState e, boolean failed, long tickMicros) {
        e.outcomes.record(tickMicros, failed);
        if (!failed) {
            return false;
        }
        e.failures++;
        if (config.suspendAfterFailures() <= 0 || e.suspended()) {
            return false;
        }
        int f = e.outcomes.failures(tickMicros);
        int total = e.outcomes.total(tickMicros);
        if (f >= config.suspendAfterFailures() && f >= config.suspendFailureRate() * total
                && othersSucceed(e, tickMicros)) {
            suspend(e, f, total, tickMicros);
            return true;
        }
        return false;
    }

    private boolean othersSucceed(ExecutorState failing, long tickMicros) {
        long since = tickMicros - config.suspendWindowMillis() * 1000;
        for (ExecutorState x : byLink.values()) {
            if (x != failing && x.eligible() && x.outcomes.lastSuccessMicros >= since) {
                return true;
            }
        }
        return false;
    }

    private void suspend(ExecutorState e, int failures, int total, long tickMicros) {
        if (e.eligible()) {
            totalCredits -= e.credits;
        }
        e.suspendedUntilMicros = tickMicros + config.suspendForMillis() * 1000;
        e.suspended = true;
        e.suspensions++;
        log.warn("executor {} suspended for {} s: {} of its last {} outcomes within {} s failed while other "
                        + "executors succeed", LogSafe.text(e.id), config.suspendForMillis() / 1000, failures, total,
                config.suspendWindowMillis() / 1000);
    }

    /** Ends the suspensions that are over; returns the executors back at work. */
    List<ExecutorState> resumeDue(long tickMicros) {
        List<ExecutorState> back = null;
        for (ExecutorState e : byLink.values()) {
            if (e.suspended() && e.suspendedUntilMicros <= tickMicros) {
                e.suspended = false;
                e.outcomes.clear();
                totalCredits += e.credits;
                enterRing(e);
                log.info("executor {} back from suspension", LogSafe.text(e.id));
                (back == null ? back = new ArrayList<>() : back).add(e);
            }
        }
        return back == null ? List.of() : back;
    }

    // ---- data diffusion ------------------------------------------------------------------------

    /** CACHE_UPDATE: applies the report to the index; true when the executor lost objects. */
    boolean cacheUpdate(ExecutorState e, Message.CacheUpdate update) {
        if (update.full()) {
            index.removeAll(e);
        }
        for (String id : update.removed()) {
            index.remove(e, id);
        }
        for (Message.CachedObject o : update.added()) {
            index.add(e, o.id(), o.size());
        }
        return update.full() || !update.removed().isEmpty();
    }

    /** Among executors with credits that {@code allowed} accepts, the one caching the most of the inputs. */
    ExecutorState bestWithCredit(Task t, Predicate<ExecutorState> allowed) {
        return t.inputIds == null ? null
                : index.best(t.inputIds, t.inputSizes, x -> x.credits > 0 && x.eligible() && allowed.test(x)
                && (!t.sized() || x.fitsNow(t)));
    }

    /** Whether another eligible executor has not failed {@code t} yet: a retry should go there. */
    boolean someoneElseFor(Task t) {
        for (ExecutorState x : byLink.values()) {
            if (x.eligible() && !t.avoids(x)) {
                return true;
            }
        }
        return false;
    }

    // ---- resources -----------------------------------------------------------------------------

    /** Whether some registered executor could ever run {@code t} (vacuously false with none registered). */
    boolean someoneCouldHold(Task t) {
        for (ExecutorState x : byLink.values()) {
            if (x.couldHold(t)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The executor to keep for {@code t}, a sized task that fits nowhere now: among eligible executors
     * that could hold it (and it does not avoid, while another could take it), the one with the most
     * credits, so the fewest results stand between it and a start. Null when there is none.
     */
    ExecutorState reserveFor(Task t) {
        ExecutorState best = null;
        boolean elsewhere = t.failedOn != null && someoneElseFor(t);
        for (ExecutorState x : byLink.values()) {
            if (x.eligible() && x.couldHold(t) && !(elsewhere && t.avoids(x))
                    && (best == null || x.credits > best.credits)) {
                best = x;
            }
        }
        return best;
    }

    /** The largest slot count, advertised memory and disk among registered executors, for a refusal's message. */
    String largest() {
        int slots = 0;
        long memory = 0;
        long disk = 0;
        java.util.TreeMap<String, Long> named = new java.util.TreeMap<>();
        for (ExecutorState x : byLink.values()) {
            slots = Math.max(slots, x.slots);
            memory = Math.max(memory, x.memoryMiB);
            disk = Math.max(disk, x.diskMiB);
            for (int i = 0; x.offered != null && i < x.offered.size(); i++) {
                named.merge(x.offered.name(i), x.offered.amount(i), Math::max);
            }
        }
        StringBuilder s = new StringBuilder(slots + " slots");
        s.append(memory == Long.MAX_VALUE ? "" : ", " + memory + " MiB of memory")
                .append(disk == Long.MAX_VALUE ? "" : ", " + disk + " MiB of disk");
        named.forEach((name, amount) -> s.append(", ").append(amount).append(' ').append(name));
        return s.toString();
    }

    // ---- views ---------------------------------------------------------------------------------

    void whenRegistered(int count, CompletableFuture<Void> future) {
        // always through the list, even when the count is already reached: a run's executors
        // register before or after it asks, by chance, and a class only one order loads is missing
        // from the class data archive the build trains on one run (bin/falkon), costing every run
        // that takes the other order a search of the whole class path
        waiters.add(new ExecutorWaiter(count, future));
        wakeWaiters();
    }

    Collection<ExecutorState> all() {
        return byLink.values();
    }

    int size() {
        return byLink.size();
    }

    int totalCredits() {
        return totalCredits;
    }

    int totalSlots() {
        return totalSlots;
    }

    long suspendedCount() {
        return byLink.values().stream().filter(ExecutorState::suspended).count();
    }
}
