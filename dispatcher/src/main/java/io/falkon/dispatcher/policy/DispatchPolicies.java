package io.falkon.dispatcher.policy;

import java.util.List;

/** The policies this dispatcher knows, by name. */
public final class DispatchPolicies {
    private DispatchPolicies() {
    }

    public static List<String> names() {
        return List.of(FirstAvailable.NAME, "fa");
    }

    /** The policy called {@code name} ({@code fa} is short for {@code first-available}). */
    public static DispatchPolicy byName(String name) {
        switch (name) {
            case FirstAvailable.NAME:
            case "fa":
                return new FirstAvailable();
            default:
                throw new IllegalArgumentException("unknown dispatch policy '" + name + "' (known: "
                        + String.join(", ", names()) + ")");
        }
    }
}
