package io.falkon.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.Map;

/**
 * A JSON document as Jackson's tree, read and written with its streaming parser and generator alone: an ObjectMapper costs a
 * short command (falkon status) tens of milliseconds of set-up before it reads anything, for date
 * formats, type factories and serializers a tree never uses. It reads each line of a .jsonl task file
 * too. The parser bounds the nesting (Jackson's StreamReadConstraints), so the recursion here is bounded.
 */
final class JsonTree {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    /** Thread-safe once configured; one for every document (each line of a .jsonl file is one). */
    private static final JsonFactory FACTORY = new JsonFactory();

    private JsonTree() {
    }

    static JsonNode read(String json) throws IOException {
        try (JsonParser p = FACTORY.createParser(json)) {
            JsonToken first = p.nextToken();
            if (first == null) {
                throw new IOException("an empty document where JSON was expected");
            }
            JsonNode root = value(p, first);
            if (p.nextToken() != null) {
                throw new IOException("more than one JSON value in the document");
            }
            return root;
        }
    }

    /** New object nodes, made without an ObjectMapper (written with {@link #write}). */
    static ObjectNode object() {
        return NODES.objectNode();
    }

    /**
     * The tree as compact JSON, as an ObjectMapper writes it ({@code JsonNode.toString()} sets one up:
     * a run's first {@code --results} line or its {@code --json} summary paid for it).
     */
    static String write(JsonNode node) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            write(g, node);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return out.toString();
    }

    private static void write(JsonGenerator g, JsonNode n) throws IOException {
        switch (n.getNodeType()) {
            case OBJECT -> {
                g.writeStartObject();
                for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    g.writeFieldName(e.getKey());
                    write(g, e.getValue());
                }
                g.writeEndObject();
            }
            case ARRAY -> {
                g.writeStartArray();
                for (JsonNode e : n) {
                    write(g, e);
                }
                g.writeEndArray();
            }
            case STRING -> g.writeString(n.textValue());
            case NUMBER -> {
                if (n.isInt() || n.isLong() || n.isShort()) {
                    g.writeNumber(n.longValue());
                } else if (n.isBigInteger()) {
                    g.writeNumber(n.bigIntegerValue());
                } else if (n.isBigDecimal()) {
                    g.writeNumber(n.decimalValue());
                } else if (n.isFloat()) {
                    g.writeNumber(n.floatValue());
                } else {
                    g.writeNumber(n.doubleValue());
                }
            }
            case BOOLEAN -> g.writeBoolean(n.booleanValue());
            case NULL -> g.writeNull();
            default -> throw new IllegalArgumentException("a " + n.getNodeType() + " node has no JSON form here");
        }
    }

    private static JsonNode value(JsonParser p, JsonToken t) throws IOException {
        switch (t) {
            case START_OBJECT -> {
                ObjectNode o = NODES.objectNode();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    o.set(name, value(p, p.nextToken()));
                }
                return o;
            }
            case START_ARRAY -> {
                ArrayNode a = NODES.arrayNode();
                for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
                    a.add(value(p, e));
                }
                return a;
            }
            case VALUE_STRING -> {
                return NODES.textNode(p.getText());
            }
            case VALUE_NUMBER_INT -> { // the node an ObjectMapper would make: int, long or big
                return switch (p.getNumberType()) {
                    case INT -> NODES.numberNode(p.getIntValue());
                    case LONG -> NODES.numberNode(p.getLongValue());
                    default -> NODES.numberNode(p.getBigIntegerValue());
                };
            }
            case VALUE_NUMBER_FLOAT -> {
                return NODES.numberNode(p.getDoubleValue());
            }
            case VALUE_TRUE, VALUE_FALSE -> {
                return NODES.booleanNode(t == JsonToken.VALUE_TRUE);
            }
            case VALUE_NULL -> {
                return NODES.nullNode();
            }
            default -> throw new IOException("unexpected " + t + " at " + p.currentLocation());
        }
    }
}
