package io.falkon.executor.run;

class JdkRunnerTest extends TaskRunnerContract {
    @Override
    TaskRunner runner(int outputCap, long spoolLimit) {
        return new JdkRunner(spool, 0, outputCap, spoolLimit, work);
    }
}
