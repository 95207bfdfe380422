package v1alpha1

// TuningMode says what the operator does with the settings it computes from a server's resources.
// +kubebuilder:validation:Enum=Auto;Recommend;Off
type TuningMode string

const (
	// TuningAuto writes the computed settings to the server's configuration.
	TuningAuto TuningMode = "Auto"
	// TuningRecommend computes them and shows them in status alone.
	TuningRecommend TuningMode = "Recommend"
	// TuningOff computes nothing: the server runs with its defaults and spec.config.
	TuningOff TuningMode = "Off"
)

// TuningProfile says what a MySQL's memory is mostly for.
// +kubebuilder:validation:Enum=Mixed;ReadMostly;WriteHeavy
type TuningProfile string

const (
	// ProfileMixed gives the buffer pool 60 % of the memory left once the server's own is set
	// aside, and the connections' worst case the rest; the redo log is a quarter of the pool.
	ProfileMixed TuningProfile = "Mixed"
	// ProfileReadMostly gives the buffer pool 75 %, to hold more of the data read; the redo log
	// is an eighth of the pool.
	ProfileReadMostly TuningProfile = "ReadMostly"
	// ProfileWriteHeavy gives the buffer pool 50 %, for more connections, and the redo log half
	// of the pool, for fewer checkpoints under writes.
	ProfileWriteHeavy TuningProfile = "WriteHeavy"
)

// MySQLTuning says how the operator sizes mysqld's memory settings from its resources.
type MySQLTuning struct {
	// Mode: Recommend computes the buffer pool, max_connections, the in-memory temporary table
	// size and the redo log from the container's memory limit (its request when it has no limit)
	// and the data volume, such that the server stays within its memory when every connection
	// uses its whole session buffers at once, and shows them in status.tuning alone. Auto also
	// writes them to my.cnf: a change restarts the server, as a change of spec.config does, and
	// max_connections may be lower than the server's default of 151. Off computes nothing. A
	// spec.config line that sets one of them wins, and status.tuning names it. Defaults to
	// Recommend, so that a server keeps its settings until asked.
	// +kubebuilder:default=Recommend
	// +optional
	Mode TuningMode `json:"mode,omitempty"`

	// Profile is what the memory is mostly for: Mixed, ReadMostly (a larger buffer pool) or
	// WriteHeavy (more connections and a larger redo log). Defaults to Mixed.
	// +kubebuilder:default=Mixed
	// +optional
	Profile TuningProfile `json:"profile,omitempty"`
}

// WorkerTuning says how the operator sizes a web server's workers from its resources.
type WorkerTuning struct {
	// Mode: Recommend computes how many requests Apache serves at once (MaxRequestWorkers) from
	// the container's memory limit (its request when it has no limit), such that every worker
	// rendering a page at once stays within it, and shows it in status.tuning alone. Auto also
	// passes it to Apache on its command line: a change rolls the pods, and the image must start
	// Apache with apache2-foreground, as the wordpress:apache images do. Off computes nothing.
	// Defaults to Recommend, so that the pods keep their settings until asked.
	// +kubebuilder:default=Recommend
	// +optional
	Mode TuningMode `json:"mode,omitempty"`
}

// TunedSetting is one server setting the operator computed.
type TunedSetting struct {
	// Name of the setting, as the server's configuration spells it.
	Name string `json:"name"`
	// Value computed, in the configuration's units.
	Value string `json:"value"`
	// OverriddenBy is the spec.config line that sets the setting in its place, when there is one.
	// +optional
	OverriddenBy string `json:"overriddenBy,omitempty"`
}

// TuningStatus is what the operator computed from a server's resources, and whether it applies.
type TuningStatus struct {
	// Mode the settings were computed under: Auto (the server runs with them) or Recommend
	// (status alone).
	Mode TuningMode `json:"mode"`
	// Profile the settings were computed for, for a kind that has profiles.
	// +optional
	Profile TuningProfile `json:"profile,omitempty"`
	// Memory the settings were computed from: the container's memory limit, or its request.
	// +optional
	Memory string `json:"memory,omitempty"`
	// Settings computed, when the memory allows.
	// +listType=map
	// +listMapKey=name
	// +optional
	Settings []TunedSetting `json:"settings,omitempty"`
	// WorstCase is the memory the server can use with the computed settings, with every
	// connection or worker allowed busy at once: for MySQL, its own, the buffer pool and the other
	// global buffers, and every connection's session buffers and in-memory temporary table.
	// +optional
	WorstCase string `json:"worstCase,omitempty"`
	// Message says why nothing was computed: no memory limit or request, or too little memory.
	// +optional
	Message string `json:"message,omitempty"`
}
