package io.falkon.client.transport;

import io.falkon.protocol.Message;

import java.util.List;

/** Receives an instance's results as the connection gets them. */
public interface ResultSink {

    void deliver(List<Message.DeliveredResult> results);

    /** The connection broke: no more results will come. */
    void connectionLost(Throwable cause);
}
