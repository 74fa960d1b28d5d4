package io.falkon.protocol;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.util.Collections;

/** The host name a server puts in the addresses it hands out (the dispatcher's WSDL, its dashboard's URL). */
public final class AdvertisedHost {
    private AdvertisedHost() {
    }

    /**
     * As configured; else the bind address; else (every interface) this host's name, or its first
     * non-loopback address when the name only resolves to loopback.
     */
    public static String of(InetSocketAddress bound, String configured) {
        if (configured != null && !configured.isEmpty()) {
            return configured;
        }
        InetAddress a = bound.getAddress();
        if (a != null && !a.isAnyLocalAddress()) {
            return bound.getHostString();
        }
        try {
            InetAddress local = InetAddress.getLocalHost();
            if (!local.isLoopbackAddress()) {
                return local.getHostName();
            }
            for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (ni.isUp() && !ni.isLoopback()) {
                    for (InetAddress addr : Collections.list(ni.getInetAddresses())) {
                        if (addr instanceof Inet4Address) {
                            return addr.getHostAddress();
                        }
                    }
                }
            }
        } catch (IOException e) {
            // this host's name does not resolve and its interfaces cannot be listed: loopback it is
        }
        return "127.0.0.1";
    }
}
