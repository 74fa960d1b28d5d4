package io.falkon.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Named resources beside cores, memory and disk (docs/cli.md "GPUs and other resources"): what a
 * task asks of one executor ({@link ExtTags#NAMED_RESOURCES}) and what an executor offers (its
 * {@code resources} registration attribute). A name is {@code [a-z][a-z0-9_]*}, at most 32
 * characters, never {@code cores}, {@code memory} or {@code disk}; an amount is a whole number of
 * units, 1..{@link #MAX_AMOUNT}. {@code gpus} is the one name with a meaning of its own: the
 * executor hands its devices over in {@code CUDA_VISIBLE_DEVICES} (or ROCm's variables).
 *
 * <p>One canonical form, checked in every language: names sorted, each once. On the wire:
 * {@code count:u16} then {@code name:str amount:u32} per resource; as an attribute:
 * {@code gpus=4,license=2}.
 */
public final class NamedResources {
    /** The resource the executors find devices for and hand over through the vendors' variables. */
    public static final String GPUS = "gpus";
    /** Most names one task may ask for or one executor offer. */
    public static final int MAX_NAMES = 16;
    /** Most units of one resource. */
    public static final long MAX_AMOUNT = 1_000_000;
    /** Longest name. */
    public static final int MAX_NAME_LENGTH = 32;
    /** The registration attribute an executor offers its named resources in. */
    public static final String ATTRIBUTE = "resources";
    /** Names taken by the resources every task has. */
    private static final Set<String> RESERVED = Set.of("cores", "memory", "disk");

    private final String[] names;
    private final long[] amounts;

    private NamedResources(String[] names, long[] amounts) {
        this.names = names;
        this.amounts = amounts;
    }

    /** Why {@code name} cannot name a resource, or null. */
    public static String nameProblem(String name) {
        if (name == null || name.isEmpty()) {
            return "a resource needs a name";
        }
        if (name.length() > MAX_NAME_LENGTH) {
            return "resource name '" + LogSafe.text(name) + "' is longer than " + MAX_NAME_LENGTH + " characters";
        }
        char c0 = name.charAt(0);
        boolean ok = c0 >= 'a' && c0 <= 'z';
        for (int i = 1; ok && i < name.length(); i++) {
            char c = name.charAt(i);
            ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        }
        if (!ok) {
            return "resource name '" + LogSafe.text(name) + "' is not of the form [a-z][a-z0-9_]*";
        }
        if (RESERVED.contains(name)) {
            return "'" + name + "' is not a named resource (state it as a task's " + name + ")";
        }
        return null;
    }

    /** Why a resource cannot be asked for or offered in this amount, or null. */
    public static String amountProblem(String name, long amount) {
        return amount < 1 || amount > MAX_AMOUNT
                ? "resource " + name + " must be 1.." + MAX_AMOUNT + ", got " + amount : null;
    }

    /**
     * The canonical set of {@code amounts} by name (an amount of 0 leaves its name out); null when
     * nothing remains. Throws {@link IllegalArgumentException} naming the wrong entry.
     */
    public static NamedResources of(Map<String, ? extends Number> amounts) {
        TreeMap<String, Long> sorted = new TreeMap<>();
        for (Map.Entry<String, ? extends Number> e : amounts.entrySet()) {
            String problem = nameProblem(e.getKey());
            long amount = e.getValue().longValue();
            if (problem == null && amount != 0) {
                problem = amountProblem(e.getKey(), amount);
            }
            if (problem != null) {
                throw new IllegalArgumentException(problem);
            }
            if (amount != 0) {
                sorted.put(e.getKey(), amount);
            }
        }
        if (sorted.size() > MAX_NAMES) {
            throw new IllegalArgumentException("at most " + MAX_NAMES + " named resources, got " + sorted.size());
        }
        if (sorted.isEmpty()) {
            return null;
        }
        String[] n = sorted.keySet().toArray(String[]::new);
        long[] a = new long[n.length];
        for (int i = 0; i < n.length; i++) {
            a[i] = sorted.get(n[i]);
        }
        return new NamedResources(n, a);
    }

    /** How many names. */
    public int size() {
        return names.length;
    }

    public String name(int i) {
        return names[i];
    }

    public long amount(int i) {
        return amounts[i];
    }

    /** The amount of {@code name}, 0 when absent. */
    public long amount(String name) {
        int i = Arrays.binarySearch(names, name);
        return i >= 0 ? amounts[i] : 0;
    }

    /** Name to amount, sorted by name. */
    public Map<String, Long> asMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (int i = 0; i < names.length; i++) {
            m.put(names[i], amounts[i]);
        }
        return Collections.unmodifiableMap(m);
    }

    /** The environment variable that tells a task what it holds of {@code name}: {@code FALKON_RESOURCE_GPUS}. */
    public static String envName(String name) {
        return "FALKON_RESOURCE_" + name.toUpperCase(java.util.Locale.ROOT);
    }

    // ---- the task's field ----------------------------------------------------------------------

    public ExtField toExt() {
        return new ExtField(ExtTags.NAMED_RESOURCES, encode());
    }

    public byte[] encode() {
        ByteBuf b = Unpooled.buffer(2 + names.length * 16);
        b.writeShort(names.length);
        for (int i = 0; i < names.length; i++) {
            WireWriter.str(b, names[i]);
            WireWriter.u32(b, amounts[i], "resource amount");
        }
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    /** A task's field, checked for the canonical form: sorted names, each once, valid amounts. */
    public static NamedResources decode(byte[] value) {
        WireReader in = new WireReader(Unpooled.wrappedBuffer(value));
        int n = in.u16("named resources count");
        if (n == 0 || n > MAX_NAMES) {
            throw new ProtocolException(ErrorCode.MALFORMED,
                    "named resources: 1.." + MAX_NAMES + " names, got " + n);
        }
        String[] names = new String[n];
        long[] amounts = new long[n];
        for (int i = 0; i < n; i++) {
            names[i] = in.str("named resource " + i);
            amounts[i] = in.u32("named resource " + i + " amount");
            String problem = nameProblem(names[i]);
            if (problem == null) {
                problem = amountProblem(names[i], amounts[i]);
            }
            if (problem == null && i > 0 && names[i - 1].compareTo(names[i]) >= 0) {
                problem = "names must be sorted, each once ('" + names[i - 1] + "' before '" + names[i] + "')";
            }
            if (problem != null) {
                throw new ProtocolException(ErrorCode.MALFORMED, "named resources: " + problem);
            }
        }
        in.end("named resources");
        return new NamedResources(names, amounts);
    }

    // ---- the executor's attribute --------------------------------------------------------------

    /** The registration attribute's value: {@code gpus=4,license=2}. */
    public String attribute() {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < names.length; i++) {
            s.append(i == 0 ? "" : ",").append(names[i]).append('=').append(amounts[i]);
        }
        return s.toString();
    }

    /**
     * What an executor's {@code resources} attribute offers; null for none. Throws
     * {@link IllegalArgumentException} naming what is wrong.
     */
    public static NamedResources parseAttribute(String value) {
        if (value == null || value.isEmpty()) {
            return null;
        }
        Map<String, Long> m = new LinkedHashMap<>();
        for (String part : value.split(",", -1)) {
            int eq = part.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("resource '" + LogSafe.text(part) + "' is not name=amount");
            }
            String name = part.substring(0, eq);
            long amount;
            try {
                amount = Long.parseLong(part.substring(eq + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("resource " + LogSafe.text(name) + "'s amount is not a number");
            }
            if (amount < 1 || m.put(name, amount) != null) {
                throw new IllegalArgumentException(amount < 1 ? amountProblem(name, amount)
                        : "resource " + LogSafe.text(name) + " is offered twice");
            }
        }
        return of(m);
    }

    /** {@code 2 gpus, 1 license}: for messages. */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < names.length; i++) {
            s.append(i == 0 ? "" : ", ").append(amounts[i]).append(' ').append(names[i]);
        }
        return s.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NamedResources r && Arrays.equals(names, r.names) && Arrays.equals(amounts, r.amounts);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(names) + Arrays.hashCode(amounts);
    }
}
