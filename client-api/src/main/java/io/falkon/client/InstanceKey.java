package io.falkon.client;

/**
 * An instance's key: its id and its secret, {@code ID-SECRET} in hex. Whoever holds it can take the
 * instance over (see {@link FalkonClient#attach(String, java.util.function.Consumer)}), so it is a
 * credential: Falkon never logs it in full.
 */
public final class InstanceKey {
    private InstanceKey() {
    }

    public static String format(long id, String secret) {
        return Long.toUnsignedString(id, 16) + "-" + secret;
    }

    /** The id and secret of a key. */
    public record Parts(long id, String secret) {
    }

    /**
     * @throws IllegalArgumentException naming what is wrong, if {@code key} is not {@code ID-SECRET}
     */
    public static Parts parse(String key) {
        String k = key == null ? "" : key.trim();
        int dash = k.indexOf('-');
        if (dash < 1 || dash > 16 || dash == k.length() - 1 || !k.substring(dash + 1).matches("[0-9a-fA-F]{1,64}")) {
            throw new IllegalArgumentException("'" + shortened(k) + "' is not an instance key (ID-SECRET in hex, as "
                    + "Instance.key() and falkon submit --detach print it)");
        }
        try {
            return new Parts(Long.parseUnsignedLong(k.substring(0, dash), 16), k.substring(dash + 1).toLowerCase());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + shortened(k) + "' is not an instance key: bad id");
        }
    }

    private static String shortened(String k) {
        return k.length() <= 12 ? k : k.substring(0, 12) + "…";
    }
}
