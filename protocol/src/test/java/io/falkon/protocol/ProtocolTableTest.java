package io.falkon.protocol;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Java side against the protocol's table ({@code protocol.table}, beside {@link Protocol}): every
 * message type, extension tag, status, error code and execution flag by code and name, and every
 * golden vector's fields where the table says they are (its message's fields, in order, and nothing
 * the table does not have). The C executor ({@code tests/test_table.c}) and the Python package
 * ({@code tests/test_table.py}) check theirs against the same table; the golden vectors tie their
 * codecs to these layouts.
 */
class ProtocolTableTest {
    record Row(String kind, String code, String name, List<String> fields) {
    }

    static List<Row> table() throws IOException {
        List<Row> rows = new ArrayList<>();
        try (InputStream in = Protocol.class.getResourceAsStream("protocol.table")) {
            assertThat(in).as("protocol.table beside io.falkon.protocol.Protocol").isNotNull();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList()) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.trim().split("\\s+");
                rows.add(f[0].equals("struct") ? new Row("struct", "", f[1], List.of(f).subList(2, f.length))
                        : new Row(f[0], f[1], f[2], List.of(f).subList(3, f.length)));
            }
        }
        return rows;
    }

    private static Map<String, Integer> codes(List<Row> rows, String kind) {
        Map<String, Integer> out = new TreeMap<>();
        rows.stream().filter(r -> r.kind().equals(kind)).forEach(r -> out.put(r.name(), Integer.decode(r.code())));
        return out;
    }

    @Test
    void everyConstantHasTheTablesCodeAndName() throws Exception {
        List<Row> rows = table();
        Map<String, Integer> messages = new TreeMap<>();
        for (MessageType t : MessageType.values()) {
            messages.put(t.name(), t.code());
        }
        assertThat(messages).isEqualTo(codes(rows, "message"));
        assertThat(publicInts(ExtTags.class)).isEqualTo(codes(rows, "ext"));
        Map<String, Integer> statuses = new TreeMap<>();
        for (TaskStatus s : TaskStatus.values()) {
            statuses.put(s.name(), s.code());
        }
        assertThat(statuses).isEqualTo(codes(rows, "status"));
        Map<String, Integer> errors = new TreeMap<>();
        for (ErrorCode e : ErrorCode.values()) {
            if (e != ErrorCode.UNKNOWN) { // what a code this side does not know decodes to: not on the wire
                errors.put(e.name(), e.code());
            }
        }
        assertThat(errors).isEqualTo(codes(rows, "error"));
        assertThat(publicInts(Execution.class)).isEqualTo(codes(rows, "flag"));
    }

    /** The public static final int fields of a class, by name. */
    private static Map<String, Integer> publicInts(Class<?> c) throws IllegalAccessException {
        Map<String, Integer> out = new TreeMap<>();
        for (Field f : c.getDeclaredFields()) {
            int m = f.getModifiers();
            if (Modifier.isPublic(m) && Modifier.isStatic(m) && Modifier.isFinal(m) && f.getType() == int.class) {
                out.put(f.getName(), f.getInt(null));
            }
        }
        return out;
    }

    @Test
    void everyGoldenVectorHasItsMessagesFieldsInTheTablesOrderAndNoOther() throws Exception {
        List<Row> rows = table();
        Map<String, List<String>> structs = new LinkedHashMap<>();
        Map<String, List<String>> messages = new LinkedHashMap<>();
        for (Row r : rows) {
            if (r.kind().equals("struct")) {
                structs.put(r.name(), r.fields());
            } else if (r.kind().equals("message")) {
                messages.put(r.name(), r.fields());
            }
        }
        int checked = 0;
        try (Stream<Path> files = Files.list(Path.of("src/test/resources/vectors"))) {
            for (Path txt : files.filter(p -> p.toString().endsWith(".txt")).sorted().toList()) {
                List<String> keys = new ArrayList<>();
                String type = null;
                for (String line : Files.readAllLines(txt)) {
                    if (line.startsWith("#") || line.isBlank()) {
                        continue;
                    }
                    String key = line.substring(0, line.indexOf(" = "));
                    if (key.equals("type")) {
                        type = line.substring(line.indexOf(" = ") + 3);
                    } else {
                        keys.add(key.replaceAll("\\[\\d+]", "[]"));
                    }
                }
                List<String> fields = messages.get(type);
                assertThat(fields).as("%s: a message of the table", txt.getFileName()).isNotNull();
                Set<String> allowed = new LinkedHashSet<>();
                List<String> topLevel = new ArrayList<>();
                for (String f : fields) {
                    String name = f.substring(0, f.indexOf(':'));
                    topLevel.add(name);
                    paths(name, f.substring(f.indexOf(':') + 1), structs, allowed);
                }
                assertThat(allowed).as("%s: fields the table does not have", txt.getFileName()).containsAll(keys);
                List<String> seen = keys.stream().map(k -> k.split("[.\\[]")[0]).distinct().toList();
                assertThat(seen).as("%s: the message's fields, in the table's order", txt.getFileName())
                        .isEqualTo(topLevel);
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(40);
    }

    /** Every dump key a field of {@code kind} at {@code prefix} can have. */
    private static void paths(String prefix, String kind, Map<String, List<String>> structs, Set<String> out) {
        if (kind.startsWith("list<")) {
            out.add(prefix + ".count");
            paths(prefix + "[]", kind.substring(5, kind.length() - 1), structs, out);
        } else if (kind.equals("map")) {
            out.addAll(List.of(prefix + ".count", prefix + "[].key", prefix + "[].value"));
        } else if (kind.equals("ext")) {
            out.addAll(List.of(prefix + ".count", prefix + "[].tag", prefix + "[].value"));
        } else if (kind.equals("spec") || structs.containsKey(kind)) {
            for (String f : structs.get(kind.equals("spec") ? "TASK_SPEC" : kind)) {
                paths(prefix + "." + f.substring(0, f.indexOf(':')), f.substring(f.indexOf(':') + 1), structs, out);
            }
        } else {
            assertThat(kind).as("a kind of the table").isIn("u8", "u16", "u32", "u64", "i32", "i64", "str", "blob");
            out.add(prefix);
        }
    }
}
