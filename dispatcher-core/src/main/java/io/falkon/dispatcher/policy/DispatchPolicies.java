package io.falkon.dispatcher.policy;

import java.util.List;

/** The policies this dispatcher knows, by name. */
public final class DispatchPolicies {
    private DispatchPolicies() {
    }

    public static List<String> names() {
        return List.of("first-available (fa)", "max-cache-hit (mch)", "max-compute-util (mcu)",
                "good-cache-compute (gcc)");
    }

    /** The policy called {@code name} (long or short name), with GCC's default threshold. */
    public static DispatchPolicy byName(String name) {
        return byName(name, GoodCacheCompute.DEFAULT_THRESHOLD);
    }

    /** The policy called {@code name}; {@code gccThreshold} applies to good-cache-compute. */
    public static DispatchPolicy byName(String name, double gccThreshold) {
        return switch (name.toLowerCase()) {
            case FirstAvailable.NAME, "fa" -> new FirstAvailable();
            case MaxCacheHit.NAME, "mch" -> new MaxCacheHit();
            case MaxComputeUtil.NAME, "mcu" -> new MaxComputeUtil();
            case GoodCacheCompute.NAME, "gcc" -> new GoodCacheCompute(gccThreshold);
            default -> throw new IllegalArgumentException("unknown dispatch policy '" + name + "' (known: "
                    + String.join(", ", names()) + ")");
        };
    }
}
