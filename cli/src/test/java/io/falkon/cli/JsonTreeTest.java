package io.falkon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.math.BigInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The status document read without an ObjectMapper is the tree an ObjectMapper reads. */
class JsonTreeTest {

    @Test
    void aStatusLikeDocumentReadsAsTheTreeAnObjectMapperReads() throws Exception {
        String doc = """
                {"dispatcherId": "d-1", "uptimeSeconds": 2.5, "queued": 9007199254740993, "big": 184467440737095516150,
                 "executors": {"registered": 2, "slots": 4},
                 "executorList": [{"id": "e\\u001b1", "noExec": false, "memoryMiB": 8192}, {"id": "e2", "noExec": true}],
                 "nothing": null, "empty": {}, "none": [], "neg": -3, "exp": 1e3}""";
        JsonNode tree = JsonTree.read(doc);
        assertThat(tree).isEqualTo(new ObjectMapper().readTree(doc));
        assertThat(tree.path("queued").asLong()).isEqualTo(9007199254740993L);
        assertThat(tree.path("big").bigIntegerValue()).isEqualTo(new BigInteger("184467440737095516150"));
        assertThat(tree.path("executorList").get(0).path("id").asText()).isEqualTo("e\u001b1");
        assertThat(tree.path("executorList").get(1).path("noExec").asBoolean()).isTrue();
        assertThat(tree.path("nothing").isNull()).isTrue();
    }

    @Test
    void aTreeIsWrittenAsAnObjectMapperWritesIt() throws Exception {
        com.fasterxml.jackson.databind.node.ObjectNode o = JsonTree.object();
        o.put("task", 7L).put("line", 3).put("command", "echo \"é\" \u0001\n").put("succeeded", true)
                .put("seconds", 0.1 + 0.2).put("rate", 12.5f).put("big", new BigInteger("184467440737095516150"))
                .put("dec", new java.math.BigDecimal("1.50")).put("short", (short) 2).putNull("none");
        o.putObject("data").put("bytesStore", Long.MAX_VALUE).putObject("empty");
        o.putArray("archived").add(1).add("x").addObject().put("size", -1);
        assertThat(JsonTree.write(o)).isEqualTo(new ObjectMapper().writeValueAsString(o));
        assertThat(JsonTree.read(JsonTree.write(o))).isEqualTo(new ObjectMapper().readTree(o.toString()));
    }

    @Test
    void whatIsNotOneJsonValueIsRefused() {
        assertThatThrownBy(() -> JsonTree.read("")).isInstanceOf(IOException.class).hasMessageContaining("empty");
        assertThatThrownBy(() -> JsonTree.read("{} {}")).isInstanceOf(IOException.class)
                .hasMessageContaining("more than one");
        assertThatThrownBy(() -> JsonTree.read("{\"a\": ")).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> JsonTree.read("{\"a\" 1}")).isInstanceOf(IOException.class);
    }
}
