package io.falkon.dispatcher.core;

/**
 * What the journal keeps of an instance: enough to re-create it after a restart, secret included
 * (a client re-attaches with it), with the client task ids it had accepted (so that a bundle re-sent
 * after the restart is recognised) as ranges {@code [from0, to0, from1, to1, …]}.
 *
 * @param highestClientTaskId the highest client task id accepted, -1 for none
 */
public record InstanceRecord(long id, String name, String secret, long leaseSeconds, long createdMicros,
                             long highestClientTaskId, long[] acceptedRanges) {
}
