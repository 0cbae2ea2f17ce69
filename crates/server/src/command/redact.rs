//! Which arguments of a command are secrets, shown as "(redacted)" by MONITOR and
//! SLOWLOG GET, as Redis 7.0 redacts them: every argument of AUTH, the user and password
//! of HELLO's AUTH and of MIGRATE's AUTH / AUTH2, the values of the sensitive
//! parameters CONFIG SET sets (`masterauth`, `masteruser`, `requirepass`), and every
//! argument of ACL SETUSER from the user name on (its rules may hold passwords).

use super::args::is;

/// What a redacted argument is shown as.
pub const SHOWN: &[u8] = b"(redacted)";

/// CONFIG parameters whose values are secrets (Redis's SENSITIVE_CONFIG).
const SENSITIVE: &[&str] = &["masterauth", "masteruser", "requirepass"];

/// The positions in `args` (the command name first) to hide.
pub fn positions(args: &[&[u8]]) -> Vec<usize> {
    let Some(&name) = args.first() else { return Vec::new() };
    if is(name, "auth") {
        (1..args.len()).collect()
    } else if is(name, "hello") {
        // HELLO protover AUTH user pass ...: only once both follow (as Redis, which
        // redacts them as it takes them).
        match args.iter().skip(2).position(|a| is(a, "auth")).map(|at| at + 2) {
            Some(at) if at + 2 < args.len() => vec![at + 1, at + 2],
            _ => Vec::new(),
        }
    } else if is(name, "migrate") {
        migrate(args)
    } else if is(name, "config") && args.len() > 3 && is(args[1], "set") {
        (2..args.len() - 1)
            .step_by(2)
            .filter(|&i| SENSITIVE.iter().any(|s| is(args[i], s)))
            .map(|i| i + 1)
            .collect()
    } else if is(name, "acl") && args.len() > 2 && is(args[1], "setuser") {
        (2..args.len()).collect()
    } else {
        Vec::new()
    }
}

/// MIGRATE's AUTH password and AUTH2 username password, read as the command reads its
/// options (up to KEYS, or an argument it refuses).
fn migrate(args: &[&[u8]]) -> Vec<usize> {
    let mut hidden = Vec::new();
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(args[j], "auth") && more >= 1 {
            hidden.push(j + 1);
            j += 1;
        } else if is(args[j], "auth2") && more >= 2 {
            hidden.extend([j + 1, j + 2]);
            j += 2;
        } else if !is(args[j], "copy") && !is(args[j], "replace") {
            break;
        }
        j += 1;
    }
    hidden
}

/// `args` with the secrets replaced by [`SHOWN`]; None when there are none (the common
/// case: no copy).
pub fn redacted<'a>(args: &[&'a [u8]]) -> Option<Vec<&'a [u8]>> {
    let hidden = positions(args);
    (!hidden.is_empty()).then(|| args.iter().enumerate().map(|(i, a)| if hidden.contains(&i) { SHOWN } else { *a }).collect())
}

#[cfg(test)]
mod tests {
    use super::positions;

    fn hidden(words: &str) -> Vec<usize> {
        let args: Vec<&[u8]> = words.split(' ').map(str::as_bytes).collect();
        positions(&args)
    }

    /// As Redis 7.0.15's SLOWLOG GET showed each (checked by hand).
    #[test]
    fn secrets_are_found_as_redis_finds_them() {
        assert_eq!(hidden("AUTH x"), vec![1]);
        assert_eq!(hidden("auth u x"), vec![1, 2]);
        assert_eq!(hidden("HELLO 3 AUTH a"), Vec::<usize>::new());
        assert_eq!(hidden("HELLO 3 AUTH a b SETNAME n"), vec![3, 4]);
        assert_eq!(hidden("CONFIG SET masteruser z"), vec![3]);
        assert_eq!(hidden("CONFIG SET nosuch w masterauth q"), vec![5]);
        assert_eq!(hidden("CONFIG SET maxmemory 0 REQUIREPASS q2"), vec![5]);
        assert_eq!(hidden("CONFIG SET tls-key-file-pass x"), Vec::<usize>::new());
        assert_eq!(hidden("ACL SETUSER x on >pw"), vec![2, 3, 4]);
        assert_eq!(hidden("MIGRATE h 1 x 0 0 AUTH p KEYS a"), vec![7]);
        assert_eq!(hidden("MIGRATE h 1 x 0 0 COPY AUTH2 u p"), vec![8, 9]);
        assert_eq!(hidden("MIGRATE h 1 k 0 0 AUTH2 u"), Vec::<usize>::new());
        assert_eq!(hidden("GET AUTH"), Vec::<usize>::new());
    }
}
