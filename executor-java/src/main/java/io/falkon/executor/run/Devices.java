package io.falkon.executor.run;

import io.falkon.protocol.NamedResources;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The named resources an executor offers and which of them its running tasks hold. The dispatcher
 * keeps the count (it never sends more than is free); this part picks the devices: each index to
 * one task at a time, a slot's own devices again where they are free, so that a persistent worker,
 * whose environment names its devices, keeps them for its whole life. Not thread-safe: the
 * {@link SlotPool} calls it under its lock.
 */
final class Devices {
    private final List<ResourceOffer> offers;
    private final NamedResources offered;
    /** Per offer: units held (counted) or which devices are held. */
    private final long[] heldUnits;
    private final boolean[][] heldDevices;
    /** Per slot: the device positions of each offer its last task held, for the next one. */
    private final int[][][] lastBySlot;
    private final Map<String, String> hidden;

    private Devices(List<ResourceOffer> offers, int slots) {
        this.offers = offers;
        Map<String, Long> m = new LinkedHashMap<>();
        offers.forEach(o -> m.put(o.name(), o.amount()));
        this.offered = NamedResources.of(m);
        this.heldUnits = new long[offers.size()];
        this.heldDevices = new boolean[offers.size()][];
        for (int i = 0; i < offers.size(); i++) {
            heldDevices[i] = offers.get(i).devices() == null ? null : new boolean[offers.get(i).devices().size()];
        }
        this.lastBySlot = new int[slots][offers.size()][];
        Map<String, String> h = new LinkedHashMap<>();
        for (ResourceOffer o : offers) {
            if (o.name().equals(NamedResources.GPUS) && o.devices() != null) {
                h.putAll(gpuVariables(o.vendor(), List.of()));
            }
        }
        this.hidden = Map.copyOf(h);
    }

    /** The executor's devices, or null when it offers none (then tasks run as they always did). */
    static Devices of(List<ResourceOffer> offers, int slots) {
        List<ResourceOffer> some = new ArrayList<>();
        for (ResourceOffer o : offers) {
            if (o.amount() > 0) {
                some.add(o);
            }
        }
        some.sort(Comparator.comparing(ResourceOffer::name));
        return some.isEmpty() ? null : new Devices(some, slots);
    }

    /** What it offers, for its registration's {@code resources} attribute. */
    NamedResources offered() {
        return offered;
    }

    /** Why a task asking {@code asked} could never run here, or null. */
    String problem(NamedResources asked) {
        if (asked == null) {
            return null;
        }
        if (offered == null) {
            return "needs " + asked + "; this executor offers no named resources";
        }
        for (int i = 0; i < asked.size(); i++) {
            if (asked.amount(i) > offered.amount(asked.name(i))) {
                return "needs " + asked + "; this executor offers " + offered;
            }
        }
        return null;
    }

    /** Whether everything {@code asked} is free now. */
    boolean free(NamedResources asked) {
        for (int i = 0; asked != null && i < asked.size(); i++) {
            int k = index(asked.name(i));
            if (k < 0 || asked.amount(i) > offers.get(k).amount() - heldUnits[k]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Takes what a task asks for on {@code slot} (it is {@link #free}): the variables that hand it
     * over, and what to {@link #give} back. A task that asks for no GPUs on an executor that has them
     * gets variables that hide them, so that no two tasks share a device unknowingly.
     */
    Grant take(NamedResources asked, int slot) {
        if (asked == null) {
            return new Grant(hidden, null);
        }
        Map<String, String> env = new LinkedHashMap<>(hidden);
        int[][] taken = new int[offers.size()][];
        for (int i = 0; i < asked.size(); i++) {
            int k = index(asked.name(i));
            ResourceOffer o = offers.get(k);
            int n = (int) asked.amount(i);
            heldUnits[k] += n;
            if (o.devices() == null) {
                taken[k] = new int[]{n};
                env.put(NamedResources.envName(o.name()), Integer.toString(n));
                continue;
            }
            taken[k] = pick(k, n, lastBySlot[slot][k]);
            lastBySlot[slot][k] = taken[k];
            List<String> devices = new ArrayList<>(n);
            for (int d : taken[k]) {
                devices.add(o.devices().get(d));
            }
            env.put(NamedResources.envName(o.name()), String.join(",", devices));
            if (o.name().equals(NamedResources.GPUS)) {
                env.putAll(gpuVariables(o.vendor(), devices));
            }
        }
        return new Grant(env, taken);
    }

    /** Gives back what a finished task held. */
    void give(Grant g) {
        if (g.taken == null) {
            return;
        }
        for (int k = 0; k < g.taken.length; k++) {
            if (g.taken[k] == null) {
                continue;
            }
            if (heldDevices[k] == null) {
                heldUnits[k] -= g.taken[k][0];
                continue;
            }
            for (int d : g.taken[k]) {
                heldDevices[k][d] = false;
            }
            heldUnits[k] -= g.taken[k].length;
        }
    }

    /** {@code n} free devices of offer {@code k}: the slot's last ones first, then the lowest. */
    private int[] pick(int k, int n, int[] last) {
        int[] out = new int[n];
        int got = 0;
        boolean[] held = heldDevices[k];
        for (int i = 0; last != null && i < last.length && got < n; i++) {
            if (!held[last[i]]) {
                held[last[i]] = true;
                out[got++] = last[i];
            }
        }
        for (int d = 0; d < held.length && got < n; d++) {
            if (!held[d]) {
                held[d] = true;
                out[got++] = d;
            }
        }
        if (got < n) {
            throw new IllegalStateException("only " + got + " of " + n + " devices free"); // free() said otherwise
        }
        java.util.Arrays.sort(out);
        return out;
    }

    private int index(String name) {
        for (int k = 0; k < offers.size(); k++) {
            if (offers.get(k).name().equals(name)) {
                return k;
            }
        }
        return -1;
    }

    /**
     * The vendor's variables for these devices. ROCm's {@code HIP_VISIBLE_DEVICES} counts among the
     * devices {@code ROCR_VISIBLE_DEVICES} left visible, so it is 0..n-1, not the indices again
     * (which would select past the end). Empty: no device at all.
     */
    static Map<String, String> gpuVariables(ResourceOffer.Vendor vendor, List<String> devices) {
        if (vendor == ResourceOffer.Vendor.AMD) {
            List<String> relative = new ArrayList<>();
            for (int i = 0; i < devices.size(); i++) {
                relative.add(Integer.toString(i));
            }
            // an empty ROCR_VISIBLE_DEVICES would show every device; -1 matches none
            String rocr = devices.isEmpty() ? "-1" : String.join(",", devices);
            String hip = devices.isEmpty() ? "-1" : String.join(",", relative);
            return Map.of("ROCR_VISIBLE_DEVICES", rocr, "HIP_VISIBLE_DEVICES", hip);
        }
        return Map.of("CUDA_VISIBLE_DEVICES", String.join(",", devices));
    }

    /** What one task holds: its variables, and per offer the devices (or the one count) to give back. */
    record Grant(Map<String, String> env, int[][] taken) {
    }
}
