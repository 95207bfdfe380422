-- Argo CD health check for every kind of apps.appkeeper.dev (WebServer, Memcached, PodSet, MySQL,
-- WordPress, MySQLBackup, WordPressBackup). Argo CD passes the resource as the global obj and reads
-- the returned table's status and message.
--
-- Argo CD runs the scripts of argocd-cm without Lua's string library unless told otherwise, so this
-- one uses only the base and table libraries.

local function health(status, message)
  return { status = status, message = message }
end

-- said is a condition in words: its reason, then its message.
local function said(c)
  local reason, message = c.reason or "", c.message or ""
  if message == "" then
    return reason
  end
  if reason == "" then
    return message
  end
  return reason .. ": " .. message
end

local status = obj.status
if status == nil or next(status) == nil then
  return health("Progressing", "Waiting for the operator to report on the resource")
end

local generation = obj.metadata.generation or 0
local observed = status.observedGeneration or 0
if observed < generation then
  if observed == 0 then
    return health("Progressing", "Waiting for the operator to report on the resource")
  end
  return health("Progressing", "Waiting for the operator to observe generation " .. generation ..
    " (it reported on generation " .. observed .. ")")
end

-- A condition the operator computed for an older generation says nothing of the spec as it is.
local conditions = {}
for _, c in ipairs(status.conditions or {}) do
  if c.type ~= nil and (c.observedGeneration == nil or c.observedGeneration >= generation) then
    conditions[c.type] = c
  end
end
for _, name in ipairs({ "Degraded", "Stalled" }) do
  if conditions[name] ~= nil and conditions[name].status == "True" then
    return health("Degraded", said(conditions[name]))
  end
end

-- A backup that failed, whose restore did not match it, or whose verification could not run (a Job
-- that failed for good) is no backup to rely on, and no later pass changes that.
local complete, verified = conditions["Complete"], conditions["Verified"]
if status.phase == "Failed" then
  if complete ~= nil and said(complete) ~= "" then
    return health("Degraded", said(complete))
  end
  return health("Degraded", "The backup failed")
end
if complete ~= nil and complete.status == "False" then
  return health("Degraded", said(complete))
end
if verified ~= nil and (verified.status == "False" or verified.reason == "VerificationFailed") then
  return health("Degraded", said(verified))
end

-- notes are what a healthy database adds about its backups: it serves, yet a person wants to know.
local function notes(message)
  local backup = obj.spec ~= nil and obj.spec.backup or nil
  if backup ~= nil and backup.suspend == true then
    message = message .. "; scheduled backups are suspended (spec.backup.suspend)"
  end
  local summary = status.backup
  if summary ~= nil and summary.lastFailedBackup ~= nil and summary.lastFailedBackup ~= "" then
    message = message .. "; the last backup, " .. summary.lastFailedBackup .. ", failed"
  end
  return message
end

local ready = conditions["Ready"]
if ready ~= nil then
  if ready.status == "True" then
    local message = ready.message or ""
    if message == "" then
      message = ready.reason or "Ready"
    end
    return health("Healthy", notes(message))
  end
  -- Ready False is a resource on its way; Ready Unknown is an observation that failed, which the
  -- operator retries.
  return health("Progressing", said(ready))
end

-- Backups that report a phase and no Ready condition.
if status.phase ~= nil and status.phase ~= "" then
  if status.phase == "Succeeded" then
    if verified ~= nil and verified.status ~= "True" then
      return health("Progressing", said(verified))
    end
    return health("Healthy", complete ~= nil and said(complete) or "The backup succeeded")
  end
  if complete ~= nil and said(complete) ~= "" then
    return health("Progressing", said(complete))
  end
  return health("Progressing", "The backup is " .. status.phase)
end

return health("Progressing", "Waiting for the operator to report the Ready condition")
