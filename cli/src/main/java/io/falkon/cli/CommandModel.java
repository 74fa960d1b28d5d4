package io.falkon.cli;

import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.ArgGroupSpec;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.IGetter;
import picocli.CommandLine.Model.ISetter;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

/**
 * A command's picocli model built in code (picocli's programmatic API) instead of read from
 * annotations, for the commands a user waits on: {@code falkon run} and the top level. Reading
 * annotations was a third of a short run's start-up on JDK 17 (docs/benchmarks.md, "Start-up"):
 * the JDK generates a proxy class for each annotation type it meets, and picocli reflects over
 * every member of the command, {@code Object}'s included. Built here, the same options cost a
 * fraction of that.
 * <p>
 * The options bind to fields of the object they configure, named here, as picocli's annotations
 * bind them: a field's initial value is the option's default (shown for {@code ${DEFAULT-VALUE}}),
 * its type the option's type, and {@code <field>} its label unless one is given. A field that does
 * not exist fails when the model is built, which every test of the command line does.
 */
final class CommandModel {

    private final CommandSpec spec;
    private final Object target;
    private final List<ArgSpec> args = new ArrayList<>();

    private CommandModel(CommandSpec spec, Object target) {
        this.spec = spec;
        this.target = target;
    }

    /**
     * A command that runs {@code command} (a {@link java.util.concurrent.Callable}; another object
     * needs a subcommand), with {@code -h, --help} and {@code -V, --version} as
     * picocli's standard help options have them (which would be read from picocli's annotations).
     */
    static CommandModel command(String name, Object command, IVersionProvider version, String... description) {
        CommandSpec spec = CommandSpec.wrapWithoutInspection(command).name(name).versionProvider(version);
        spec.usageMessage().description(description);
        spec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true)
                .description("Show this help message and exit.").build());
        spec.addOption(OptionSpec.builder("-V", "--version").versionHelp(true)
                .description("Print version information and exit.").build());
        return new CommandModel(spec, command);
    }

    /** Options and parameters bound to {@code target}'s fields, to mix into a command or to group. */
    static CommandModel of(Object target) {
        return new CommandModel(CommandSpec.wrapWithoutInspection(target), target);
    }

    /**
     * An option bound to {@code field}. {@code names} as help prints them: {@code "--slots"},
     * {@code "-v, --verbose"}, or with a label for the value, {@code "--executor=IMPL"}.
     */
    CommandModel option(String field, String names, String description) {
        int eq = names.indexOf('=');
        String[] all = (eq < 0 ? names : names.substring(0, eq)).split(", ");
        FieldBinding binding = new FieldBinding(target, field);
        OptionSpec option = OptionSpec.builder(all[0], java.util.Arrays.copyOfRange(all, 1, all.length))
                .type(binding.field.getType()).getter(binding).setter(binding).initialValue(binding.get())
                .paramLabel(eq < 0 ? "<" + field + ">" : names.substring(eq + 1)).description(description).build();
        spec.addOption(option);
        args.add(option);
        return this;
    }

    /** The positional parameter at {@code index}, bound to {@code field}. */
    CommandModel parameter(String field, int index, String label, String description) {
        FieldBinding binding = new FieldBinding(target, field);
        PositionalParamSpec p = PositionalParamSpec.builder().index(Integer.toString(index))
                .type(binding.field.getType()).getter(binding).setter(binding).initialValue(binding.get())
                .paramLabel(label).description(description).build();
        spec.addPositional(p);
        args.add(p);
        return this;
    }

    /** The positional parameters from {@code index} on, all of them, bound to a {@code List<String>} {@code field}. */
    CommandModel parameters(String field, int index, String label, String description) {
        FieldBinding binding = new FieldBinding(target, field);
        PositionalParamSpec p = PositionalParamSpec.builder().index(index + "..*").arity("0..*")
                .type(java.util.List.class).auxiliaryTypes(String.class).getter(binding).setter(binding)
                .initialValue(binding.get()).paramLabel(label).description(description).build();
        spec.addPositional(p);
        args.add(p);
        return this;
    }

    /** {@code other}'s options and parameters, in this command (picocli's mixin). */
    CommandModel mixin(String name, CommandModel other) {
        spec.addMixin(name, other.spec);
        return this;
    }

    /**
     * {@code members}' options as a group under their own heading in help: given together or not at
     * all, each on its own (picocli's non-exclusive group, its co-occurrence not checked).
     */
    CommandModel group(String heading, CommandModel members) {
        ArgGroupSpec.Builder group = ArgGroupSpec.builder().exclusive(false).validate(false).heading(heading);
        for (ArgSpec arg : members.args) { // a loop: a method reference to picocli's class keeps it out of the archive
            group.addArg(arg);
        }
        spec.addArgGroup(group.build());
        return this;
    }

    CommandSpec spec() {
        return spec;
    }

    /** A field of the object an option configures, read and written as picocli's annotations would. */
    private static final class FieldBinding implements IGetter, ISetter {
        private final Object target;
        private final Field field;

        FieldBinding(Object target, String name) {
            this.target = target;
            try {
                field = target.getClass().getDeclaredField(name);
            } catch (NoSuchFieldException e) {
                throw new IllegalStateException(target.getClass().getName() + " has no field " + name, e);
            }
            field.setAccessible(true);
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> T get() {
            try {
                return (T) field.get(target);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public <T> T set(T value) {
            T old = get();
            try {
                field.set(target, value);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
            return old;
        }
    }
}
