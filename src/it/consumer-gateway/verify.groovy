// What the consumer gateway resolved and packaged, checked after its build (its test has
// already routed a request through DualMap to an emulated instance):
// - the versions it runs with are the ones the library was built and tested with here,
//   Resilience4j's among them, and that is the version spring-cloud-dependencies manages;
// - no Kotlin runtime, no test library, no command-line or charting library, nothing of
//   the tools module (simulator, emulator, engine model, overhead harness, demo).
import java.util.zip.ZipFile
import java.util.zip.ZipInputStream

def problems = [] as LinkedHashSet

// Its test ran and passed (a skipped one would leave the build green).
def report = new File(basedir, 'target/surefire-reports/TEST-com.example.gateway.ConsumerGatewayApplicationTests.xml')
if (!report.isFile()) {
    throw new AssertionError("the consumer's test did not run: no ${report}")
}
def suite = (report.text =~ /<testsuite [^>]*/)[0]
def count = { String name -> (suite =~ /\b${name}="(\d+)"/)[0][1] }
if (count('tests') != '1' || count('failures') != '0' || count('errors') != '0' || count('skipped') != '0') {
    problems << "the consumer's test: ${suite}"
}

// "   group:artifact:type[:classifier]:version:scope -- module ..." -> "group:artifact[:classifier]" -> version
def resolved = { File list ->
    if (!list.isFile()) {
        throw new IllegalStateException("missing ${list}")
    }
    def versions = [:]
    list.eachLine { line ->
        def parts = line.trim().split(' ')[0].split(':')
        if (parts.length >= 5 && !line.startsWith('The following')) {
            def key = parts.length == 6 ? "${parts[0]}:${parts[1]}:${parts[3]}" : "${parts[0]}:${parts[1]}"
            versions[key.toString()] = parts[parts.length - 2]
        }
    }
    versions
}

def consumer = resolved(new File(basedir, 'target/runtime-dependencies.txt'))
def library = resolved(new File(libraryDependencies))
println "consumer runtime: ${consumer.size()} artifacts; library runtime: ${library.size()} artifacts"

if (!consumer.containsKey('io.github.dualmap:dualmap-gateway')) {
    problems << 'dualmap-gateway is not on the runtime classpath'
}
['io.github.resilience4j:resilience4j-circuitbreaker', 'io.github.resilience4j:resilience4j-core'].each { ga ->
    if (consumer[ga] == null || consumer[ga] != library[ga]) {
        problems << "${ga}: the consumer runs ${consumer[ga]}, the library was tested with ${library[ga]}".toString()
    }
    else {
        println "${ga}: ${consumer[ga]} in both"
    }
}
// The version Spring Cloud manages: spring-cloud-dependencies names the circuit breaker
// BOM, which sets resilience4j.version (read from the poms this build resolved).
def springCloud = (new File(basedir, 'pom.xml').text =~ /<spring-cloud.version>([^<]+)</)[0][1]
def pomText = { String path, String artifact, String version ->
    new File(localRepositoryPath, "${path}/${artifact}/${version}/${artifact}-${version}.pom").text
}
def circuitBreakerBom = (pomText('org/springframework/cloud', 'spring-cloud-dependencies', springCloud)
        =~ /<spring-cloud-circuitbreaker.version>([^<]+)</)[0][1]
def managed = (pomText('org/springframework/cloud', 'spring-cloud-circuitbreaker-dependencies', circuitBreakerBom)
        =~ /<resilience4j.version>([^<]+)</)[0][1]
println "Resilience4j managed by spring-cloud-dependencies ${springCloud}: ${managed}"
if (consumer['io.github.resilience4j:resilience4j-circuitbreaker'] != managed) {
    problems << "resilience4j-circuitbreaker: the consumer runs ${consumer['io.github.resilience4j:resilience4j-circuitbreaker']}, Spring Cloud manages ${managed}".toString()
}
consumer.each { ga, version ->
    if (library.containsKey(ga) && library[ga] != version) {
        problems << "${ga}: the consumer runs ${version}, the library was tested with ${library[ga]}".toString()
    }
}
def banned = ['org.jetbrains.kotlin:', 'org.junit', 'org.opentest4j:', 'info.picocli:', 'org.knowm.xchart:',
              'me.tongfei:', 'io.github.dualmap:dualmap-tools']
consumer.keySet().each { ga ->
    if (banned.any { ga.startsWith(it) }) {
        problems << "${ga} is on the runtime classpath"
    }
}

// The application as it ships: every class and resource of every jar in it.
def bannedEntries = ~/^(io\/github\/dualmap\/(sim|emulator|engine|overhead)\/.*|io\/github\/dualmap\/DualMapApplication\.class|dualmap-demo\.yml|picocli\/.*|org\/knowm\/xchart\/.*|me\/tongfei\/progressbar\/.*|kotlin\/.*)$/
def jar = new File(basedir, 'target/consumer-gateway-1.0.0.jar')
def libraryClasses = 0
new ZipFile(jar).withCloseable { zip ->
    zip.entries().findAll { it.name.startsWith('BOOT-INF/lib/') && it.name.endsWith('.jar') }.each { nested ->
        new ZipInputStream(zip.getInputStream(nested)).withCloseable { in ->
            def entry
            def offending = []
            while ((entry = in.nextEntry) != null) {
                if (entry.name ==~ bannedEntries) {
                    offending << entry.name
                }
                if (entry.name.startsWith('io/github/dualmap/gateway/')) {
                    libraryClasses++
                }
            }
            if (!offending.isEmpty()) {
                problems << "${nested.name} holds ${offending.size()} entries it must not, first ${offending[0]}"
            }
        }
    }
}
println "${jar.name}: ${libraryClasses} classes of io.github.dualmap.gateway, nothing of the tools"
if (libraryClasses < 20) {
    problems << "${jar.name} has only ${libraryClasses} classes of io.github.dualmap.gateway"
}

if (!problems.isEmpty()) {
    throw new AssertionError('consumer build:\n  ' + problems.join('\n  '))
}
true
